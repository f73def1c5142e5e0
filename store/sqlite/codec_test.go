package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

// lineShape is a native line for the codec tests, and whether it is long
// and repetitive enough that the store must keep it compressed.
type lineShape struct {
	name     string
	data     []byte
	size     int64 // the whole line's size when only its head is kept
	compress bool
}

func lineShapes() []lineShape {
	rnd := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	}
	// A tool result as a harness prints it: a JSON line whose text
	// repeats (a file listing).
	var listing strings.Builder
	listing.WriteString(`{"type":"user","message":{"content":[{"type":"tool_result","content":"`)
	for i := 0; listing.Len() < 16<<20; i++ {
		fmt.Fprintf(&listing, "src/pkg%d/file_%d.go:%d: func Handle(ctx context.Context) error\\n", i%97, i, i%1000)
	}
	listing.WriteString(`"}]}}`)
	huge := []byte(listing.String())
	invalid := bytes.Repeat([]byte("caf\xc3 \xff\xfe \xed\xa0\x80 lone surrogate "), 200)
	binary := bytes.Repeat([]byte{0, 1, 2, 0xff, 0, '\n', '\r', 0x80}, 1000)
	return []lineShape{
		{name: "empty", data: []byte{}},
		{name: "one byte", data: []byte("x")},
		{name: "small json", data: []byte(`{"type":"stream_event","event":{"delta":{"text":"hi"}}}`)},
		{name: "just under the threshold, repetitive", data: bytes.Repeat([]byte("a"), 2047)},
		{name: "at the threshold, repetitive", data: bytes.Repeat([]byte("ab"), 1024), compress: true},
		{name: "long random bytes", data: random(64 << 10)},
		{name: "binary with NUL, CR and LF", data: binary, compress: true},
		{name: "invalid UTF-8", data: invalid, compress: true},
		{name: "huge json", data: huge, compress: true},
		{name: "head of a longer line", data: huge[:1<<20], size: 40 << 20, compress: true},
		{name: "looks like an S2 block", data: append([]byte{0x80, 0x10, 0x00}, bytes.Repeat([]byte{0}, 4000)...), compress: true},
	}
}

// storedLine is a line as the test expects to read it back.
func storedLine(i int, sh lineShape, ts time.Time) store.Line {
	l := store.Line{Stream: store.Stdout, Data: sh.data, Size: int64(len(sh.data)), TS: ts}
	if sh.size > 0 {
		l.Size = sh.size
		sum := sha256.Sum256([]byte(sh.name)) // any 32 bytes stand for the whole line's sum
		l.SHA256 = sum[:]
	}
	// Both streams, numbered each from 1.
	l.N = int64(i/2 + 1)
	if i%2 == 1 {
		l.Stream = store.Stderr
	}
	return l
}

// diffLines reports how got differs from want, line by line: cmp.Diff
// over lines of megabytes takes minutes. Nil and empty data are the same.
func diffLines(want, got []store.Line) string {
	var b strings.Builder
	if len(got) != len(want) {
		fmt.Fprintf(&b, "%d lines, want %d\n", len(got), len(want))
	}
	for i := range min(len(want), len(got)) {
		w, g := want[i], got[i]
		if g.Stream != w.Stream || g.N != w.N || g.Size != w.Size || !g.TS.Equal(w.TS) ||
			!bytes.Equal(g.SHA256, w.SHA256) || !bytes.Equal(g.Data, w.Data) {
			fmt.Fprintf(&b, "line %d: got %s:%d size %d ts %v sha256 %x and %d bytes (first %.40q), want %s:%d size %d ts %v sha256 %x and %d bytes (first %.40q)\n",
				i, g.Stream, g.N, g.Size, g.TS, g.SHA256, len(g.Data), g.Data, w.Stream, w.N, w.Size, w.TS, w.SHA256, len(w.Data), w.Data)
		}
	}
	return b.String()
}

func readAllLines(t *testing.T, st *sqlite.Store, id string) []store.Line {
	t.Helper()
	var got []store.Line
	if err := st.Lines(context.Background(), id, func(l store.Line) error {
		got = append(got, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLineCodec: lines of every shape read back byte for byte, through
// Line, Lines and a replay's comparison; the long repetitive ones are kept
// compressed (in a fraction of their size) and the others as they are.
func TestLineCodec(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "codec.db")
	st := openPath(t, path, sqlite.Options{})
	w, err := st.Create(ctx, store.NewSession{ID: "s_codec", Harness: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	shapes := lineShapes()
	var want []store.Line
	for i, sh := range shapes {
		l := storedLine(i, sh, ts.Add(time.Duration(i)*time.Millisecond))
		want = append(want, l)
		if err := w.Line(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Replays of the stored lines are compared with what is stored.
	for i := range want {
		if err := w.Line(ctx, want[i]); err != nil {
			t.Errorf("%s: replay of the same line: %v", shapes[i].name, err)
		}
	}
	for i, sh := range shapes {
		if !sh.compress {
			continue
		}
		other := want[i]
		other.Data = bytes.Clone(other.Data)
		other.Data[len(other.Data)-1] ^= 1
		if err := w.Line(ctx, other); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: replay with its last byte changed: %v, want store.ErrConflict", sh.name, err)
		}
		break // the conflict is sticky: one is enough
	}
	w.Close(ctx)

	got := readAllLines(t, st, "s_codec")
	if diff := diffLines(want, got); diff != "" {
		t.Errorf("Lines:\n%s", diff)
	}
	for i, l := range want {
		one, err := st.Line(ctx, "s_codec", l.Stream, l.N)
		if err != nil {
			t.Fatal(err)
		}
		if diff := diffLines([]store.Line{l}, []store.Line{one}); diff != "" {
			t.Errorf("Line %s:\n%s", shapes[i].name, diff)
		}
	}

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, sh := range shapes {
		var stored int64
		var codec sql.NullInt64
		if err := db.QueryRowContext(ctx, `SELECT length(data), codec FROM lines WHERE stream = ? AND n = ?`,
			want[i].Stream, want[i].N).Scan(&stored, &codec); err != nil {
			t.Fatal(err)
		}
		if codec.Valid != sh.compress {
			t.Errorf("%s (%d bytes): stored with codec %v, want compressed %v", sh.name, len(sh.data), codec, sh.compress)
		}
		if !sh.compress && stored != int64(len(sh.data)) {
			t.Errorf("%s: %d bytes stored for %d as they are", sh.name, stored, len(sh.data))
		}
		if sh.compress && stored > int64(len(sh.data))/4 {
			t.Errorf("%s: %d bytes stored for %d, want at most a quarter", sh.name, stored, len(sh.data))
		}
	}
}

// TestLinesOfSchema6 opens a database of schema 6, whose lines were all
// kept as they are (no codec column), reads them back unchanged, and then
// stores new lines beside them compressed.
func TestLinesOfSchema6(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v6.db")
	st := openPath(t, path, sqlite.Options{})
	w, err := st.Create(ctx, store.NewSession{ID: "s_v6", Harness: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	w.Close(ctx)
	st.Close()
	// Back to schema 6, and lines inserted as its writer kept them.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE lines DROP COLUMN codec;
		DELETE FROM schema_migrations WHERE version >= 7`); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	shapes := lineShapes()
	var want []store.Line
	for i, sh := range shapes {
		l := storedLine(i, sh, ts)
		want = append(want, l)
		var sum any
		if l.SHA256 != nil {
			sum = l.SHA256
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO lines (sid, stream, n, size, sha256, ts, data)
			VALUES ((SELECT sid FROM sessions WHERE id = 's_v6'), ?, ?, ?, ?, ?, ?)`,
			l.Stream, l.N, l.Size, sum, l.TS.UnixMilli(), l.Data); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	st = openPath(t, path, sqlite.Options{})
	if diff := diffLines(want, readAllLines(t, st, "s_v6")); diff != "" {
		t.Errorf("Lines of schema 6:\n%s", diff)
	}
	for i, l := range want {
		one, err := st.Line(ctx, "s_v6", l.Stream, l.N)
		if err != nil {
			t.Fatal(err)
		}
		if diff := diffLines([]store.Line{l}, []store.Line{one}); diff != "" {
			t.Errorf("Line %s of schema 6:\n%s", shapes[i].name, diff)
		}
	}
	// The same lines in a new session are kept compressed and read the
	// same.
	w2, err := st.Create(ctx, store.NewSession{ID: "s_v7", Harness: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range want {
		if err := w2.Line(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	w2.Close(ctx)
	if diff := diffLines(want, readAllLines(t, st, "s_v7")); diff != "" {
		t.Errorf("Lines written after migration 7:\n%s", diff)
	}
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var old, compressed int
	if err := db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM lines WHERE sid = (SELECT sid FROM sessions WHERE id = 's_v6') AND codec IS NOT NULL),
		(SELECT count(*) FROM lines WHERE sid = (SELECT sid FROM sessions WHERE id = 's_v7') AND codec IS NOT NULL)`).Scan(&old, &compressed); err != nil {
		t.Fatal(err)
	}
	wantCompressed := 0
	for _, sh := range shapes {
		if sh.compress {
			wantCompressed++
		}
	}
	if old != 0 || compressed != wantCompressed {
		t.Errorf("compressed lines: %d of schema 6 (want 0, none rewritten), %d new (want %d)", old, compressed, wantCompressed)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// bodyEnvelopes are stored events whose bodies are short, long and
// repetitive (kept compressed), and long and random (kept as they are);
// each tool output holds a word of its own for search.
func bodyEnvelopes(session string) (envs []agentstream.Envelope, compressed []bool) {
	rnd := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 48<<10)
	for i := range random {
		random[i] = "abcdefghijklmnopqrstuvwxyz0123456789 \n\"\\é"[rnd.IntN(41)]
	}
	ts := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	outputs := []struct {
		text     string
		compress bool
	}{
		{"short output quokka", false},
		{"long output wombat\n" + strings.Repeat("drwxr-xr-x  2 root root 4096 Dec  2 15:00 src\n", 2000), true},
		{"random output numbat " + string(random), false},
		{"", false},
	}
	for i, o := range outputs {
		envs = append(envs, agentstream.Envelope{Session: session, Seq: int64(i + 1), TS: ts, Harness: "claude-code", Turn: 1,
			Origin: agentstream.OriginLive, Payload: &agentstream.ToolResult{CallID: fmt.Sprint("c", i), Output: o.text}})
		compressed = append(compressed, o.compress)
	}
	return envs, compressed
}

// TestBodyCodec: events with long bodies read back as they were written,
// through Events, a replay's comparison and Search; the long repetitive
// ones are kept compressed and the others as they are; and bodies stored
// by schema 6 read the same.
func TestBodyCodec(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bodies.db")
	st := openPath(t, path, sqlite.Options{})
	envs, compressed := bodyEnvelopes("s_bodies")
	w, err := st.Create(ctx, store.NewSession{ID: "s_bodies", Harness: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range envs {
		if err := w.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range envs {
		if err := w.Handle(ctx, e); err != nil {
			t.Errorf("replay of event %d: %v", e.Seq, err)
		}
	}
	changed := envs[1]
	changed.Payload = &agentstream.ToolResult{CallID: "c1", Output: envs[1].Payload.(*agentstream.ToolResult).Output + "!"}
	if err := w.Handle(ctx, changed); !errors.Is(err, store.ErrConflict) {
		t.Errorf("replay of event 2 with another output: %v, want store.ErrConflict", err)
	}
	w.Close(ctx)
	checkBodies(t, st, "s_bodies", envs)
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored []bool
	rows, err := db.QueryContext(ctx, `SELECT hex(substr(body, 1, 1)) != '22' FROM events ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c bool
		rows.Scan(&c)
		stored = append(stored, c)
	}
	rows.Close()
	if fmt.Sprint(stored) != fmt.Sprint(compressed) {
		t.Errorf("events stored compressed: %v, want %v", stored, compressed)
	}

	// A database of schema 6, without the codec columns, holding the
	// same events as they are.
	path = filepath.Join(t.TempDir(), "v6.db")
	openPath(t, path, sqlite.Options{}).Close()
	db6, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db6.Close()
	if _, err := db6.ExecContext(ctx, `ALTER TABLE lines DROP COLUMN codec;
		DELETE FROM schema_migrations WHERE version >= 7;
		INSERT INTO sessions (sid, id, status, started_at, last_seq) VALUES (9, 's_v6', 'succeeded', 0, 4)`); err != nil {
		t.Fatal(err)
	}
	old, _ := bodyEnvelopes("s_v6")
	for _, e := range old {
		if _, err := db6.ExecContext(ctx, `INSERT INTO events (key, ts, type, body) VALUES (?, ?, ?, ?)`,
			9<<40|e.Seq, e.TS.UnixMilli(), e.Type(), store.AppendBody(nil, &e)); err != nil {
			t.Fatal(err)
		}
	}
	db6.Close()
	checkBodies(t, openPath(t, path, sqlite.Options{}), "s_v6", old)
}

// checkBodies checks that session id holds envs, and that search finds
// each of their words.
func checkBodies(t *testing.T, st *sqlite.Store, id string, envs []agentstream.Envelope) {
	t.Helper()
	ctx := context.Background()
	evs, err := st.Events(ctx, id, store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, e := range envs {
		want = append(want, string(e.AppendJSON(nil)))
	}
	for _, ev := range evs {
		got = append(got, string(ev.Data))
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", id, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: event %d: got %d bytes %.80q, want %d bytes %.80q", id, i+1, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
	for _, word := range []string{"quokka", "wombat", "numbat"} {
		hits, err := st.Search(ctx, store.SearchQuery{Text: word})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].Session != id || !strings.Contains(hits[0].Snippet, word) {
			t.Errorf("%s: search %s: %+v, want one hit whose snippet holds the word", id, word, hits)
		}
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}
