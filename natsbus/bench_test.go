package natsbus_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/web/api"
)

// BenchmarkTransport sends one spool of benchLines native lines (about
// 100 bytes each) end to end into SQLite, through the HTTP uploader and
// api.New, and through the NATS publisher and the consumer on an embedded
// JetStream server; and publishes it to the stream alone. It reports lines
// a second of each and the ratios to HTTP, and (on Unix) the CPU time a
// line costs the whole process end to end over HTTP and over NATS:
//
//	go test -run '^$' -bench Transport -benchtime 3x ./natsbus/
func BenchmarkTransport(b *testing.B) {
	const benchLines = 20000
	ns := startNATS(b, b.TempDir(), -1)
	nc := connect(b, ns.ClientURL())
	stream := ensureStream(b, nc)
	var httpTime, natsTime, pubTime time.Duration
	var httpCPU, natsCPU time.Duration // the process's: every part is in it
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		// HTTP: the uploader to a real server over loopback.
		st := openStore(b)
		srv := httptest.NewServer(api.New(st, hub.New(hub.Options{}), api.Options{}))
		id := fmt.Sprintf("s_http%d", i)
		sp, _ := newSpool(b, b.TempDir(), id, benchLines, true)
		start, cpu := time.Now(), processCPU()
		up := (&api.Client{URL: srv.URL}).NewUploader(sp, api.UploaderOptions{})
		if err := up.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		httpTime += time.Since(start)
		httpCPU += processCPU() - cpu
		sp.Close()
		srv.Close()

		// NATS: the publisher, and the consumer writing to SQLite; the
		// stream is emptied first, so that the consumer, which starts at
		// its beginning, takes this iteration's session only.
		if err := stream.Purge(ctx); err != nil {
			b.Fatal(err)
		}
		st = openStore(b)
		cons := natsbus.Consume(connect(b, ns.ClientURL()), api.NewIngester(st, api.Options{HeartbeatTimeout: -1}),
			natsbus.ConsumerOptions{Durable: fmt.Sprintf("bench%d", i)})
		id = fmt.Sprintf("s_nats%d", i)
		sp, lines := newSpool(b, b.TempDir(), id, benchLines, true)
		start, cpu = time.Now(), processCPU()
		p, err := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{BatchRecords: 512})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		pubTime += time.Since(start)
		for {
			if sess, err := st.Session(ctx, id); err == nil && !sess.Running() {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		natsTime += time.Since(start)
		natsCPU += processCPU() - cpu
		waitStored(b, st, id, len(lines), true)
		cons.Stop()
		sp.Close()
	}
	rate := func(d time.Duration) float64 { return float64(b.N*benchLines) / d.Seconds() }
	b.ReportMetric(rate(httpTime), "http-lines/s")
	b.ReportMetric(rate(natsTime), "nats-lines/s")
	b.ReportMetric(rate(pubTime), "publish-lines/s")
	b.ReportMetric(httpTime.Seconds()/natsTime.Seconds(), "nats/http")
	b.ReportMetric(httpTime.Seconds()/pubTime.Seconds(), "publish/http")
	if httpCPU > 0 {
		perLine := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N*benchLines) }
		b.ReportMetric(perLine(httpCPU), "http-cpu-µs/line")
		b.ReportMetric(perLine(natsCPU), "nats-cpu-µs/line")
	}
}
