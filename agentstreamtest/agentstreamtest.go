// Package agentstreamtest is the conformance suite every adapter runs, in the
// spirit of testing/slogtest: golden expected events for recorded fixtures,
// and the invariants that hold for every dialect. Each failure names the rule
// it broke.
//
// The rules:
//
//   - golden: a fixture's envelopes equal its golden file (rewritten with the
//     test file's -update flag);
//   - json: every envelope is one line of valid UTF-8 JSON that decodes and
//     re-encodes to the same bytes;
//   - seq: stored events are numbered 1, 2, 3, … and live events have none;
//   - deterministic: the same input gives the same bytes;
//   - chunking: the same events whatever the reads (one byte at a time), with
//     "\r\n" line ends, and without a final newline;
//   - blank: blank lines give no events;
//   - garbage: a line that is not JSON gives one raw event;
//   - unknown: a JSON object of an unknown type gives one raw event;
//   - paired: every tool.result refers to an earlier tool.call;
//   - usage-once: no two call usage events share a message id;
//   - clipped: text fields hold at most MaxText code points.
package agentstreamtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

// AdapterCase says what RunAdapter checks.
type AdapterCase struct {
	// Protocol names the adapter (adapter.Lookup).
	Protocol string
	// New, when set, is used instead of the looked-up adapter's decoder.
	New func() agentstream.Decoder
	// Fixtures are globs of native recordings compared with their goldens,
	// testdata/golden/<base>.events.jsonl beside each fixture's directory.
	Fixtures []string
	// Corpus are globs of more recordings that must pass every invariant.
	Corpus []string
	// Unpaired names files (base names) allowed to hold tool results without
	// an earlier call: excerpts of longer sessions.
	Unpaired []string
	// Update rewrites the goldens instead of comparing them.
	Update bool
}

// Session is the session id the suite writes in envelopes.
const Session = "s_test"

// zeroTime makes the Normalizer take each event's own time, as offline
// normalization does.
var zeroTime time.Time

func (c *AdapterCase) adapter(t testing.TB) adapter.Adapter {
	t.Helper()
	a, err := adapter.Lookup(c.Protocol)
	if err != nil {
		if c.New == nil {
			t.Fatalf("agentstreamtest: %v", err)
		}
		a = adapter.Adapter{Protocol: agentstream.Protocol{Name: c.Protocol}}
	}
	if c.New != nil {
		a.New = c.New
	}
	return a
}

// Normalize runs a fresh decoder of a over input, read through r's reads,
// and returns every envelope (live ones included), one JSON line each.
func Normalize(a adapter.Adapter, r io.Reader) ([]byte, error) {
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{
		Session: Session, Harness: a.Harness, ExplicitTurns: a.ExplicitTurns,
	})
	lr := agentstream.NewLineReader(r)
	var out, buf []byte
	var envs []agentstream.Envelope
	emit := func() {
		for i := range envs {
			buf = envs[i].AppendJSON(buf[:0])
			out = append(out, buf...)
			out = append(out, '\n')
		}
	}
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
		envs = n.Line(envs[:0], l, zeroTime)
		emit()
	}
	envs = n.End(envs[:0], zeroTime)
	emit()
	return out, nil
}

func expand(t *testing.T, globs []string) []string {
	t.Helper()
	var files []string
	for _, g := range globs {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatalf("agentstreamtest: bad glob %q: %v", g, err)
		}
		if len(m) == 0 {
			t.Errorf("agentstreamtest: glob %q matches no file", g)
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// RunAdapter runs the whole suite for one adapter.
func RunAdapter(t *testing.T, c AdapterCase) {
	t.Helper()
	a := c.adapter(t)
	t.Run("blank", func(t *testing.T) {
		for _, line := range []string{"", " ", "\t", "  \t  "} {
			if evs := a.New().Decode(nil, []byte(line)); len(evs) != 0 {
				t.Errorf("blank: line %q gave %d events, want 0", line, len(evs))
			}
		}
	})
	t.Run("garbage", func(t *testing.T) {
		for _, line := range []string{"not json {", "{\"type\":", "{]", "\x00\xff\xfe", "[SandboxDebug] hello"} {
			evs := a.New().Decode(nil, []byte(line))
			if len(evs) != 1 || evs[0].Type() != agentstream.TypeRaw {
				t.Errorf("garbage: line %q gave %v, want one raw event", line, types(evs))
			}
		}
	})
	t.Run("unknown", func(t *testing.T) {
		line := `{"type":"agentstream.test.unknown","x":1}`
		evs := a.New().Decode(nil, []byte(line))
		if len(evs) != 1 || evs[0].Type() != agentstream.TypeRaw {
			t.Fatalf("unknown: line %s gave %v, want one raw event", line, types(evs))
		}
		if r := evs[0].Payload.(*agentstream.Raw); string(r.JSON) != line {
			t.Errorf("unknown: raw json = %s, want the line", r.JSON)
		}
	})
	fixtures := expand(t, c.Fixtures)
	for _, f := range fixtures {
		t.Run("golden/"+filepath.Base(f), func(t *testing.T) {
			golden(t, a, f, c.Update)
		})
	}
	for _, f := range append(fixtures, expand(t, c.Corpus)...) {
		t.Run("invariants/"+filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			CheckInvariants(t, a, data, !slices.Contains(c.Unpaired, filepath.Base(f)))
		})
	}
}

func types(evs []agentstream.Event) []string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e.Type())
	}
	return ts
}

func golden(t *testing.T, a adapter.Adapter, fixture string, update bool) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Normalize(a, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(filepath.Base(fixture), filepath.Ext(fixture))
	path := filepath.Join(filepath.Dir(fixture), "golden", base+".events.jsonl")
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("golden: %s differs from %s (-want +got):\n%s", fixture, path, lineDiff(want, got))
	}
}

// lineDiff shows the first differing lines of two outputs.
func lineDiff(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := strings.Split(string(got), "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 5; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n-%s\n+%s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}

// CheckInvariants checks every invariant but golden on one recording.
// paired asks for the pairing rule too.
func CheckInvariants(t *testing.T, a adapter.Adapter, data []byte, paired bool) {
	t.Helper()
	out, err := Normalize(a, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("normalize: %v", err)
	}
	again, _ := Normalize(a, bytes.NewReader(data))
	if !bytes.Equal(out, again) {
		t.Errorf("deterministic: two runs differ:\n%s", lineDiff(out, again))
	}
	variants := map[string]io.Reader{
		"one byte at a time": iotest.OneByteReader(bytes.NewReader(data)),
		"crlf":               bytes.NewReader(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))),
		"no final newline":   bytes.NewReader(bytes.TrimRight(data, "\r\n")),
		"buffered 7":         bufio.NewReaderSize(iotest.HalfReader(bytes.NewReader(data)), 16),
	}
	for name, r := range variants {
		got, err := Normalize(a, r)
		if err != nil {
			t.Errorf("chunking (%s): %v", name, err)
			continue
		}
		if !bytes.Equal(got, out) {
			t.Errorf("chunking (%s): events differ:\n%s", name, lineDiff(out, got))
		}
	}
	CheckEnvelopes(t, out, paired)
}

// CheckEnvelopes checks the rules that hold for any normalized output: json,
// seq, paired (when asked), usage-once, clipped.
func CheckEnvelopes(t *testing.T, out []byte, paired bool) {
	t.Helper()
	calls := map[string]bool{}
	msgIDs := map[string]bool{}
	var seq int64
	for i, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !utf8.Valid(line) {
			t.Errorf("json: envelope %d is not valid UTF-8", i+1)
			continue
		}
		env, err := agentstream.ParseEnvelope(line)
		if err != nil {
			t.Errorf("json: envelope %d: %v: %s", i+1, err, line)
			continue
		}
		// A jsonl harness's payloads are kept as written, so they may lack
		// keys that decoding into the typed payload fills in.
		if re := env.AppendJSON(nil); !bytes.Equal(re, line) && env.Harness != "jsonl" {
			t.Errorf("json: envelope %d does not re-encode to itself:\n-%s\n+%s", i+1, line, re)
		}
		if agentstream.IsLive(env.Type()) {
			if env.Seq != 0 {
				t.Errorf("seq: live envelope %d has seq %d", i+1, env.Seq)
			}
		} else {
			seq++
			if env.Seq != seq {
				t.Errorf("seq: envelope %d has seq %d, want %d", i+1, env.Seq, seq)
				seq = env.Seq
			}
		}
		switch p := env.Payload.(type) {
		case *agentstream.ToolCall:
			calls[p.CallID] = true
			clipped(t, i, "tool.call input", p.Input)
			clipped(t, i, "tool.call summary", p.Summary)
		case *agentstream.ToolResult:
			if paired && !calls[p.CallID] {
				t.Errorf("paired: tool.result %q (envelope %d) has no earlier tool.call", p.CallID, i+1)
			}
			clipped(t, i, "tool.result output", p.Output)
			if int64(utf8.RuneCountInString(p.Output)) > p.Characters && p.Characters > 0 {
				t.Errorf("clipped: envelope %d: output longer than characters %d", i+1, p.Characters)
			}
		case *agentstream.Usage:
			if p.Scope == agentstream.ScopeCall && p.MessageID != "" {
				if msgIDs[p.MessageID] {
					t.Errorf("usage-once: message %q counted twice (envelope %d)", p.MessageID, i+1)
				}
				msgIDs[p.MessageID] = true
			}
		case *agentstream.Message:
			clipped(t, i, "message text", p.Text)
		case *agentstream.Thinking:
			clipped(t, i, "thinking text", p.Text)
		case *agentstream.Raw:
			clipped(t, i, "raw text", p.Text)
		}
	}
}

func clipped(t *testing.T, i int, what, s string) {
	t.Helper()
	if n := utf8.RuneCountInString(s); n > agentstream.MaxText {
		t.Errorf("clipped: envelope %d: %s has %d code points", i+1, what, n)
	}
}

// FuzzDecoder fuzzes the decoder of protocol with the lines of the files
// matching glob as seeds: no input may panic, and everything the decoder
// returns must encode to valid UTF-8 JSON.
func FuzzDecoder(f *testing.F, protocol string, glob string) {
	a, err := adapter.Lookup(protocol)
	if err != nil {
		f.Fatal(err)
	}
	files, _ := filepath.Glob(glob)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) < 64<<10 {
				f.Add(l)
			}
		}
	}
	for _, s := range []string{"", "{}", "[]", "null", `{"type":1}`, `{"type":"x"`, "\xef\xbb\xbf{}", `{"a":"\ud800"}`, strings.Repeat("[", 10000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		d := a.New()
		evs := d.Decode(nil, line)
		evs = d.Decode(evs, line) // state carried across lines
		evs = d.End(evs)
		for _, ev := range evs {
			if ev.Payload == nil {
				t.Fatalf("event without payload")
			}
			env := agentstream.Envelope{Session: Session, Payload: ev.Payload, ParentCallID: ev.ParentCallID}
			b := env.AppendJSON(nil)
			if !utf8.Valid(b) {
				t.Fatalf("invalid UTF-8: %q", b)
			}
			if _, err := agentstream.ParseEnvelope(b); err != nil {
				t.Fatalf("invalid JSON %v: %s", err, b)
			}
		}
	})
}
