package api_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// smallDialer dials with a 4 KiB receive buffer, so that a reader that
// stops reading stalls its stream after a few kilobytes (and the test does
// not fill the machine's memory with socket buffers).
var smallDialer = net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	if err != nil {
		return err
	}
	return serr
}}

// smallBuffers is a listener whose connections have an 8 KiB send buffer:
// with the small receive buffer of the clients, a stream that is not read
// blocks after a few kilobytes, which is what a reader that stopped looks
// like to the server, without gigabytes of socket buffers in the kernel.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

func liveMem() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// TestMemoryBoundStalledStreams holds the server's memory under a bound
// while 1,000 event streams of a session that keeps appending stop
// reading, and 50 uploads crawl at a byte every 100 ms; then it holds that
// the stalled streams were cut by the write timeout and the crawling
// uploads by the read timeout, as serve sets them.
func TestMemoryBoundStalledStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,050 connections")
	}
	const (
		streams      = 1000
		uploads      = 50
		writeTimeout = 4 * time.Second
		readTimeout  = 2 * time.Second
		// perStream is the budget of one stalled stream: its connection's
		// buffers, its goroutine, a page of catch-up and a chunk of
		// events.
		perStream = 256 << 10
	)
	st, err := sqlite.OpenOptions(filepath.Join(t.TempDir(), "mem.db"), sqlite.Options{FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := hub.New(hub.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	followed := follow(t, ctx, st, h)
	defer func() { cancel(); <-followed }()
	srv := httptest.NewUnstartedServer(api.New(st, h, api.Options{MaxStreams: streams, MaxStreamsPerClient: streams,
		StreamWriteTimeout: writeTimeout}))
	srv.Listener = smallBuffers{srv.Listener}
	srv.Config.ReadHeaderTimeout = readTimeout
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	// A running session with history, which goes on appending 2 KB
	// messages while the streams stall.
	w, err := st.Create(ctx, store.NewSession{ID: "live", Harness: "jsonl", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("y", 2000)
	seq := int64(0)
	appendN := func(n int) {
		for range n {
			seq++
			if err := w.Handle(ctx, agentstream.Envelope{Session: "live", Seq: seq, Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: text}}); err != nil {
				t.Error(err)
				return
			}
		}
		w.Flush(ctx)
	}
	appendN(500)
	c := &api.Client{URL: srv.URL}
	if _, err := c.CreateSession(ctx, api.CreateRequest{ID: "up", Protocol: "jsonl"}); err != nil {
		t.Fatal(err)
	}
	base := liveMem()

	var conns []net.Conn
	var mu sync.Mutex
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range streams {
		conn, err := smallDialer.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		conns = append(conns, conn)
		fmt.Fprintf(conn, "GET /api/sessions/live/stream HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	}
	// Uploads that announce 4 MiB and send a byte every 100 ms.
	var cut atomic.Int32
	var wg sync.WaitGroup
	for range uploads {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		conns = append(conns, conn)
		mu.Unlock()
		fmt.Fprintf(conn, "POST /api/sessions/up/lines HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", addr, 4<<20)
		wg.Go(func() {
			for range int(3 * readTimeout / (100 * time.Millisecond)) {
				time.Sleep(100 * time.Millisecond)
				if _, err := conn.Write([]byte(" ")); err != nil {
					cut.Add(1)
					return
				}
			}
			// The server may have closed without the write failing yet:
			// it has answered, or it reads nothing any more.
			conn.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
				cut.Add(1)
			}
		})
	}
	// While they stall, the session appends; the peak is sampled.
	var peak uint64
	start := time.Now()
	for time.Since(start) < writeTimeout-time.Second {
		appendN(20)
		if m := liveMem(); m > peak {
			peak = m
		}
		time.Sleep(50 * time.Millisecond)
	}
	grown := int64(peak) - int64(base)
	t.Logf("%d stalled streams, %d crawling uploads: live heap and stacks %d MB before, %d MB at the peak (%d KB a connection)",
		streams, uploads, base>>20, peak>>20, grown/int64(streams+uploads)>>10)
	if grown > streams*perStream {
		t.Errorf("memory grew by %d MB, more than %d MB for %d streams", grown>>20, streams*perStream>>20, streams)
	}

	// The stalled streams are cut: a place is free again for a reader
	// that reads.
	deadline := time.Now().Add(3 * writeTimeout)
	for {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		req, _ := http.NewRequestWithContext(sctx, "GET", srv.URL+"/api/events/stream", nil)
		resp, err := http.DefaultClient.Do(req)
		ok := err == nil && resp.StatusCode == 200
		if err == nil {
			resp.Body.Close()
		}
		scancel()
		if ok && time.Since(start) > writeTimeout {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stalled streams were never cut")
		}
		time.Sleep(200 * time.Millisecond)
	}
	wg.Wait()
	if n := cut.Load(); n != uploads {
		t.Errorf("%d of %d crawling uploads were cut by the read timeout", n, uploads)
	}
	// Every stalled stream is cut in the end, and its memory freed.
	for {
		after := liveMem()
		if int64(after)-int64(base) <= 16<<20 {
			t.Logf("%d MB %v after the streams opened", after>>20, time.Since(start).Round(100*time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory did not come back: %d MB before, %d MB after the cuts", base>>20, after>>20)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
