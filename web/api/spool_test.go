package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// BenchmarkUpload sends the same session's lines to a real server with a
// SQLite store, directly from memory (PostLines in batches of 512) and
// through a spool (written, then sent by an Uploader from the file), and
// reports the throughput of each and the spooled/direct time ratio: what
// writing every line to disk before sending it costs.
func BenchmarkUpload(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(api.New(st, hub.New(hub.Options{}), api.Options{}))
	defer srv.Close()
	c := &api.Client{URL: srv.URL}
	input := corpusFile(b)
	var lines []store.Line
	sp := &store.LineSplitter{Stream: store.Stdout, Fn: func(l store.Line) error {
		l.Data = append([]byte(nil), l.Data...)
		lines = append(lines, l)
		return nil
	}}
	for len(lines) < 5000 {
		sp.Write(input)
	}
	sp.Close()
	var size int64
	for _, l := range lines {
		size += int64(len(l.Data)) + 1
	}
	ctx := context.Background()
	code := 0
	dir := b.TempDir()
	var direct, spooled time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		id := fmt.Sprintf("s_direct%d", i)
		if _, err := c.CreateSession(ctx, api.CreateRequest{ID: id, Protocol: "claude-json"}); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < len(lines); j += 512 {
			batch := make([]api.LineIn, 0, 512)
			for _, l := range lines[j:min(j+512, len(lines))] {
				batch = append(batch, api.NewLineIn(l))
			}
			var end *api.End
			if j+512 >= len(lines) {
				end = &api.End{ExitCode: &code}
			}
			if _, err := c.PostLines(ctx, id, batch, end); err != nil {
				b.Fatal(err)
			}
		}
		direct += time.Since(start)

		start = time.Now()
		id = fmt.Sprintf("s_spooled%d", i)
		s, err := api.CreateSpool(filepath.Join(dir, id+".spool"), api.SpoolHeader{Server: srv.URL, Session: api.CreateRequest{ID: id, Protocol: "claude-json"}})
		if err != nil {
			b.Fatal(err)
		}
		u := c.NewUploader(s, api.UploaderOptions{})
		for _, l := range lines {
			if err := s.Line(l); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.End(api.End{ExitCode: &code}); err != nil {
			b.Fatal(err)
		}
		if err := u.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		u.Stop()
		s.Close()
		spooled += time.Since(start)
	}
	b.StopTimer()
	mb := float64(size) * float64(b.N) / 1e6
	b.ReportMetric(mb/direct.Seconds(), "direct-MB/s")
	b.ReportMetric(mb/spooled.Seconds(), "spooled-MB/s")
	b.ReportMetric(spooled.Seconds()/direct.Seconds(), "spooled/direct")
}

// TestSpoolReopen checks what a crash leaves: a torn last record is cut
// off when the spool is opened again, the last line numbers are read back,
// lines added after it follow, the end names the last line of each
// stream, and a spool held by another open is busy.
func TestSpoolReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	s, err := api.CreateSpool(path, api.SpoolHeader{Server: "http://127.0.0.1:1", Session: api.CreateRequest{ID: "s_reopen", Protocol: "claude-json"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.OpenSpool(path); !errors.Is(err, api.ErrSpoolBusy) {
		t.Errorf("OpenSpool of a held spool: %v, want ErrSpoolBusy", err)
	}
	line := func(stream string, n int64) store.Line {
		text := fmt.Sprintf("%s line %d", stream, n)
		return store.Line{Stream: stream, N: n, Data: []byte(text), Size: int64(len(text))}
	}
	for n := int64(1); n <= 3; n++ {
		s.Line(line(store.Stdout, n))
	}
	s.Line(line(store.Stderr, 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"line":{"stream":"stdout","n":4,"te`) // the torn record of a killed writer
	f.Close()
	s, err = api.OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.LastLine(store.Stdout) != 3 || s.LastLine(store.Stderr) != 1 || s.Ended() {
		t.Errorf("reopened: stdout %d stderr %d ended %v", s.LastLine(store.Stdout), s.LastLine(store.Stderr), s.Ended())
	}
	s.Line(line(store.Stdout, 4))
	code := 0
	s.End(api.End{ExitCode: &code})
	s.Close()
	b, _ := os.ReadFile(path)
	recs := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(recs) != 7 || !strings.Contains(recs[5], "stdout line 4") || !strings.HasPrefix(recs[6], `{"end":`) {
		t.Errorf("spool records after reopening:\n%s", b)
	}
	for _, r := range recs {
		if !json.Valid([]byte(r)) {
			t.Errorf("record %q is not JSON", r)
		}
	}
	// The end names the last line of each stream: stdout 4 (the torn
	// record's 4 is not one, the line written after reopening is) and
	// stderr 1.
	var end struct{ End api.End }
	if err := json.Unmarshal([]byte(recs[len(recs)-1]), &end); err != nil || !maps.Equal(end.End.Lines, map[string]int64{store.Stdout: 4, store.Stderr: 1}) {
		t.Errorf("the end record %s: lines %v (%v), want stdout 4 and stderr 1", recs[len(recs)-1], end.End.Lines, err)
	}
}
