package natsbus_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startNATS starts an embedded NATS server with JetStream, its store in
// dir, on port of 127.0.0.1 (-1: a free one).
func startNATS(t testing.TB, dir string, port int) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := natsbus.Connect(url, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func ensureStream(t testing.TB, nc *nats.Conn) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := natsbus.EnsureStream(ctx, js, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newSpool writes a spool of session id with n stdout lines (and a
// stderr line every tenth), ended when end is set.
func newSpool(t testing.TB, dir, id string, n int, end bool) (*api.Spool, []store.Line) {
	t.Helper()
	sp, err := api.CreateSpool(filepath.Join(dir, id+".spool"), api.SpoolHeader{Server: "nats://test", Session: api.CreateRequest{ID: id, Protocol: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	var lines []store.Line
	var nerr int64
	for i := 1; i <= n; i++ {
		l := store.Line{Stream: store.Stdout, N: int64(i), Data: fmt.Appendf(nil, "line %d of %s", i, id)}
		lines = append(lines, l)
		if err := sp.Line(l); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			nerr++
			l := store.Line{Stream: store.Stderr, N: nerr, Data: fmt.Appendf(nil, "warning %d", nerr)}
			lines = append(lines, l)
			if err := sp.Line(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	if end {
		code := 0
		if err := sp.End(api.End{ExitCode: &code}); err != nil {
			t.Fatal(err)
		}
	} else if err := sp.Flush(); err != nil {
		t.Fatal(err)
	}
	return sp, lines
}

// checkStored fails unless the store holds exactly lines for session id,
// once each, with a dense seq, and has ended when ended is set.
func checkStored(t testing.TB, st store.Store, id string, lines []store.Line, ended bool) {
	t.Helper()
	ctx := context.Background()
	got := map[string]string{}
	if err := st.Lines(ctx, id, func(l store.Line) error {
		k := fmt.Sprintf("%s/%d", l.Stream, l.N)
		if _, dup := got[k]; dup {
			t.Errorf("line %s stored twice", k)
		}
		got[k] = string(l.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(lines) {
		t.Errorf("%d lines stored, want %d", len(got), len(lines))
	}
	for _, l := range lines {
		if k := fmt.Sprintf("%s/%d", l.Stream, l.N); got[k] != string(l.Data) {
			t.Errorf("line %s = %q, want %q", k, got[k], l.Data)
		}
	}
	evs, err := st.Events(ctx, id, store.EventQuery{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: seq not dense", i, ev.Seq)
		}
	}
	sess, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sess.LastSeq != int64(len(evs)) {
		t.Errorf("lastSeq %d, %d events", sess.LastSeq, len(evs))
	}
	if ended && sess.Running() {
		t.Errorf("session %s still running, want ended", id)
	}
}

// waitStored waits until the store holds want lines of session id.
func waitStored(t testing.TB, st store.Store, id string, want int, ended bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := 0
		_ = st.Lines(context.Background(), id, func(store.Line) error { n++; return nil })
		sess, err := st.Session(context.Background(), id)
		if n >= want && err == nil && (!ended || !sess.Running()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store holds %d lines of %s, want %d (ended %v)", n, id, want, ended)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// streamLines returns how many times each record id is in the stream.
func streamLines(t testing.TB, nc *nats.Conn, id string) map[string]int {
	t.Helper()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, natsbus.StreamName, jetstream.OrderedConsumerConfig{FilterSubjects: []string{natsbus.Subject(id)}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := js.Stream(ctx, natsbus.StreamName)
	info, _ := s.Info(ctx, jetstream.WithSubjectFilter(natsbus.Subject(id)))
	total := info.State.Subjects[natsbus.Subject(id)]
	count := map[string]int{}
	for range total {
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for rec := range bytes.SplitSeq(m.Data(), []byte("\n")) {
			count[string(rec)]++
		}
	}
	return count
}

func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSubject(t *testing.T) {
	for _, id := range []string{"s_abc", "a.b.c", "x:y-z_1.", "."} {
		subj := natsbus.Subject(id)
		p := natsbus.Partition(id)
		if p < 0 || p >= natsbus.Partitions {
			t.Errorf("Partition(%q) = %d, out of range", id, p)
		}
		if want := fmt.Sprintf("agentstream.lines.%02d.", p); !strings.HasPrefix(subj, want) || strings.Count(subj, ".") != 3 {
			t.Errorf("Subject(%q) = %q: want %s and the id in one token", id, subj, want)
		}
		if !strings.HasPrefix(natsbus.PartitionSubjects(p), strings.TrimSuffix(subj, subj[strings.LastIndexByte(subj, '.')+1:])) {
			t.Errorf("PartitionSubjects(%d) = %q does not cover %q", p, natsbus.PartitionSubjects(p), subj)
		}
		back, ok := natsbus.SessionOf(subj)
		if !ok || back != id {
			t.Errorf("SessionOf(Subject(%q)) = %q, %v", id, back, ok)
		}
		wrong := fmt.Sprintf("agentstream.lines.%02d.%s", (p+1)%natsbus.Partitions, subj[strings.LastIndexByte(subj, '.')+1:])
		if _, ok := natsbus.SessionOf(wrong); ok {
			t.Errorf("SessionOf(%q) took a subject in the wrong partition", wrong)
		}
	}
	for _, subj := range []string{"agentstream.lines.a.b", "agentstream.lines.s_abc", "agentstream.lines.1.s", "agentstream.lines.00.a.b", "other.00.a"} {
		if _, ok := natsbus.SessionOf(subj); ok {
			t.Errorf("SessionOf(%q) took it", subj)
		}
	}
	// The partitions spread the ids, by the 32-bit FNV-1a hash of the id
	// (docs/cluster.md): every node computes the same.
	seen := map[int]bool{}
	for i := range 200 {
		id := fmt.Sprintf("s_%d", i)
		h := fnv.New32a()
		h.Write([]byte(id))
		if p := natsbus.Partition(id); p != int(h.Sum32()%natsbus.Partitions) {
			t.Errorf("Partition(%q) = %d, want FNV-1a mod %d = %d", id, p, natsbus.Partitions, h.Sum32()%natsbus.Partitions)
		}
		seen[natsbus.Partition(id)] = true
	}
	if len(seen) != natsbus.Partitions {
		t.Errorf("200 ids fall in %d partitions, want all %d", len(seen), natsbus.Partitions)
	}
}

// TestPublishConsume publishes a spool and consumes it into SQLite: every
// line exactly once, a dense seq, the session ended, the spool removed.
func TestPublishConsume(t *testing.T) {
	ns := startNATS(t, t.TempDir(), -1)
	nc := connect(t, ns.ClientURL())
	ensureStream(t, nc)
	st := openStore(t)
	cons := natsbus.Consume(connect(t, ns.ClientURL()), api.NewIngester(st, api.Options{HeartbeatTimeout: -1}), natsbus.ConsumerOptions{})
	defer cons.Stop()

	const id = "s.dotted:1"
	sp, lines := newSpool(t, t.TempDir(), id, 1000, true)
	defer sp.Close()
	p, err := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{BatchRecords: 7})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	waitStored(t, st, id, len(lines), true)
	checkStored(t, st, id, lines, true)
	if _, err := filepath.Glob(sp.Path()); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(sp.Path() + "*"); len(m) > 0 {
		t.Errorf("spool files left: %v", m)
	}
	if s := cons.Status(); !s.Connected || s.Taken == 0 {
		t.Errorf("consumer status %+v, want connected with messages taken", s)
	}
}

// TestResumeLostCursor stops a publisher halfway, loses its cursor (as a
// crash between the ack and the cursor's write does), adds lines and
// publishes again: the stream holds every record once.
func TestResumeLostCursor(t *testing.T) {
	ns := startNATS(t, t.TempDir(), -1)
	nc := connect(t, ns.ClientURL())
	ensureStream(t, nc)
	dir := t.TempDir()
	const id = "s_resume"
	sp, _ := newSpool(t, dir, id, 300, false)
	p, err := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{BatchRecords: 10})
	if err != nil {
		t.Fatal(err)
	}
	for p.Acked() < sp.Size() {
		time.Sleep(5 * time.Millisecond)
	}
	p.Stop()
	if err := sp.SaveCursor(0); err != nil {
		t.Fatal(err)
	}
	for i := 301; i <= 400; i++ {
		if err := sp.Line(store.Line{Stream: store.Stdout, N: int64(i), Data: fmt.Appendf(nil, "line %d of %s", i, id)}); err != nil {
			t.Fatal(err)
		}
	}
	code := 0
	if err := sp.End(api.End{ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	p, err = natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{BatchRecords: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	sp.Close()
	count := streamLines(t, nc, id)
	lines := 0
	for rec, n := range count {
		if n != 1 {
			t.Errorf("record %.60s published %d times", rec, n)
		}
		if strings.HasPrefix(rec, `{"line":{"stream":"stdout"`) {
			lines++
		}
	}
	if lines != 400 {
		t.Errorf("%d stdout lines in the stream, want 400", lines)
	}
}

// TestStaleRefused publishes a second spool of the same session that
// lacks what the stream holds: it is refused.
func TestStaleRefused(t *testing.T) {
	ns := startNATS(t, t.TempDir(), -1)
	nc := connect(t, ns.ClientURL())
	ensureStream(t, nc)
	const id = "s_stale"
	sp1, _ := newSpool(t, t.TempDir(), id, 50, false)
	defer sp1.Close()
	p1, _ := natsbus.NewPublisher(nc, sp1, natsbus.PublisherOptions{})
	for p1.Acked() < sp1.Size() {
		time.Sleep(5 * time.Millisecond)
	}
	p1.Stop()
	sp2, _ := newSpool(t, t.TempDir(), id, 20, false)
	defer sp2.Close()
	p2, _ := natsbus.NewPublisher(nc, sp2, natsbus.PublisherOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p2.Wait(ctx); !errors.Is(err, natsbus.ErrRefused) {
		t.Fatalf("stale publisher: %v, want ErrRefused", err)
	}
}

// TestNATSRestart stops the NATS server while a spool grows and restarts
// it on the same store directory: the publisher catches up and the
// consumer stores every line once.
func TestNATSRestart(t *testing.T) {
	dir := t.TempDir()
	ns := startNATS(t, dir, -1)
	url := ns.ClientURL()
	port := ns.Addr().(*net.TCPAddr).Port
	nc := connect(t, url)
	ensureStream(t, nc)
	st := openStore(t)
	cons := natsbus.Consume(connect(t, url), api.NewIngester(st, api.Options{HeartbeatTimeout: -1}), natsbus.ConsumerOptions{})
	defer cons.Stop()

	const id = "s_restart"
	sp, lines := newSpool(t, t.TempDir(), id, 100, false)
	defer sp.Close()
	p, _ := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{Backoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	waitStored(t, st, id, len(lines), false)
	ns.Shutdown()
	ns.WaitForShutdown()
	deadline := time.Now().Add(5 * time.Second)
	for cons.Status().Connected && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := cons.Status(); s.Connected || s.Error == "" {
		t.Errorf("consumer status with NATS away: %+v, want paused", s)
	}
	// Lines spooled while NATS is away.
	for i := 101; i <= 200; i++ {
		l := store.Line{Stream: store.Stdout, N: int64(i), Data: fmt.Appendf(nil, "line %d", i)}
		lines = append(lines, l)
		if err := sp.Line(l); err != nil {
			t.Fatal(err)
		}
	}
	code := 0
	if err := sp.End(api.End{ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	startNATS(t, dir, port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	waitStored(t, st, id, len(lines), true)
	checkStored(t, st, id, lines, true)
}

// publishBig publishes a session of three lines, the first two of them
// larger than the server's payload limit (one text, one not UTF-8), and
// waits until the stream has it all; it returns the lines.
func publishBig(t *testing.T, nc *nats.Conn, id string) []store.Line {
	t.Helper()
	sp, err := api.CreateSpool(filepath.Join(t.TempDir(), id+".spool"), api.SpoolHeader{Server: "nats://test", Session: api.CreateRequest{ID: id, Protocol: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	text := bytes.Repeat([]byte("é{\"x\":\"\\u00e9\"}\t"), 5*int(nc.MaxPayload())/16) // about five times the limit
	bin := make([]byte, 3*int(nc.MaxPayload()))
	for i := range bin {
		bin[i] = byte(i*7 + i>>9)
	}
	if utf8.Valid(bin) {
		t.Fatal("the binary line is valid UTF-8")
	}
	lines := []store.Line{
		{Stream: store.Stdout, N: 1, Data: text},
		{Stream: store.Stderr, N: 1, Data: bin},
		{Stream: store.Stdout, N: 2, Data: []byte("after")},
	}
	for _, l := range lines {
		if err := sp.Line(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.End(api.End{}); err != nil {
		t.Fatal(err)
	}
	p, _ := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestObjectOversized publishes lines of several MiB, over the server's
// payload limit: they go through the object store and are stored whole.
func TestObjectOversized(t *testing.T) {
	ns := startNATS(t, t.TempDir(), -1)
	nc := connect(t, ns.ClientURL())
	ensureStream(t, nc)
	st := openStore(t)
	cons := natsbus.Consume(connect(t, ns.ClientURL()), api.NewIngester(st, api.Options{HeartbeatTimeout: -1}), natsbus.ConsumerOptions{})
	defer cons.Stop()
	const id = "s_big"
	lines := publishBig(t, nc, id)
	waitStored(t, st, id, len(lines), true)
	ctx := context.Background()
	for _, want := range lines {
		l, err := st.Line(ctx, id, want.Stream, want.N)
		if err != nil {
			t.Fatal(err)
		}
		sum, wantSum := sha256.Sum256(l.Data), sha256.Sum256(want.Data)
		if l.Truncated() || sum != wantSum || len(l.Data) != len(want.Data) {
			t.Errorf("line %s/%d: truncated %v, %d bytes, sha256 %x; want %d bytes whole, sha256 %x",
				want.Stream, want.N, l.Truncated(), len(l.Data), sum, len(want.Data), wantSum)
		}
	}
	js, _ := jetstream.New(nc)
	obs, err := js.ObjectStore(ctx, natsbus.ObjectBucket)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{id + "/stdout/1", id + "/stderr/1"} {
		if _, err := obs.GetInfo(ctx, name); err != nil {
			t.Errorf("object %s: %v, want it kept", name, err)
		}
	}
	if _, err := obs.GetInfo(ctx, id+"/stdout/2"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Errorf("a small line's object: %v, want none", err)
	}
	checkStored(t, st, id, lines, true)
}

// TestObjectMissing publishes an oversized line and removes its object
// before it is consumed: the line is stored as the stub's head, truncated,
// with the whole line's size and hash.
func TestObjectMissing(t *testing.T) {
	ns := startNATS(t, t.TempDir(), -1)
	nc := connect(t, ns.ClientURL())
	ensureStream(t, nc)
	const id = "s_gone"
	lines := publishBig(t, nc, id)
	ctx := context.Background()
	js, _ := jetstream.New(nc)
	obs, err := js.ObjectStore(ctx, natsbus.ObjectBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.Delete(ctx, id+"/stdout/1"); err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	cons := natsbus.Consume(connect(t, ns.ClientURL()), api.NewIngester(st, api.Options{HeartbeatTimeout: -1}), natsbus.ConsumerOptions{})
	defer cons.Stop()
	waitStored(t, st, id, len(lines), true)
	l, err := st.Line(ctx, id, store.Stdout, 1)
	if err != nil {
		t.Fatal(err)
	}
	big := lines[0].Data
	sum := sha256.Sum256(big)
	if !l.Truncated() || l.Size != int64(len(big)) || !bytes.Equal(l.SHA256, sum[:]) || !bytes.HasPrefix(big, l.Data) {
		t.Errorf("stored line: truncated %v, size %d (want %d), sha256 %x (want %x), head of the line %v",
			l.Truncated(), l.Size, len(big), l.SHA256, sum, bytes.HasPrefix(big, l.Data))
	}
	if l, err := st.Line(ctx, id, store.Stderr, 1); err != nil || !bytes.Equal(l.Data, lines[1].Data) {
		t.Errorf("stderr line 1: %d bytes, %v; want it whole", len(l.Data), err)
	}
}
