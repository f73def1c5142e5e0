package demo_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentstream/agentstream/internal/demo"
	"github.com/google/go-cmp/cmp"
)

func TestRecordings(t *testing.T) {
	names := demo.Names()
	want := append(demo.Imports(), demo.Live)
	slices.Sort(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
	// The demo promises sessions of different harnesses.
	protocols := map[string]string{
		"tandemtechnology-bb-stdout-subagent":           "claude-json",
		"tandemtechnology-bb-stdout-auth-failure":       "claude-json",
		"ceedaragents-cyrus-codex-exec-sample-curated":  "codex-json",
		"jnarowski-agentcmd-docs-stream-json-edit-file": "gemini-json",
		"banteg-takopi-opencode-stream-success":         "opencode-json",
		"sortie-ai-sortie-copilot-tool-use-session":     "copilot-json",
		demo.Live: "claude-json",
	}
	sources, err := os.ReadFile(filepath.Join("sessions", "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			data, err := demo.Read(name)
			if err != nil {
				t.Fatal(err)
			}
			again, err := demo.Read(name + ".jsonl")
			if err != nil || !bytes.Equal(data, again) {
				t.Errorf("Read(%q) differs from Read(%q): %v", name+".jsonl", name, err)
			}
			if got := demo.Protocol(data); got != protocols[name] {
				t.Errorf("Protocol = %q, want %q", got, protocols[name])
			}
			if !strings.Contains(string(sources), "`"+name+".jsonl`") {
				t.Errorf("sessions/SOURCES.md has no provenance for %s.jsonl", name)
			}
		})
	}
}

func TestReadUnknown(t *testing.T) {
	for _, name := range []string{"", "nosuch", "../demo.go", "sessions/SOURCES.md", "SOURCES.md"} {
		if _, err := demo.Read(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Read(%q) = %v, want fs.ErrNotExist", name, err)
		}
	}
}

// stampWriter records when each write happened, in the synctest bubble's
// clock, relative to its start.
type stampWriter struct {
	start  time.Time
	mu     sync.Mutex
	lines  []string
	offset []time.Duration
}

func (w *stampWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(p))
	w.offset = append(w.offset, time.Since(w.start))
	return len(p), nil
}

// paced is a Gemini CLI recording whose lines carry times (but the third):
// 1 s after the first, no time, 29 s later (capped), 1 s earlier.
const paced = `{"type":"init","timestamp":"2025-10-29T10:37:00.000Z","session_id":"s1","model":"gemini-2.5-pro"}
{"type":"tool_use","timestamp":"2025-10-29T10:37:01.000Z","tool_name":"read_file","tool_id":"t1","parameters":{"absolute_path":"/tmp/a"}}
{"type":"tool_result","tool_id":"t1","status":"success","output":"hello"}
{"type":"tool_use","timestamp":"2025-10-29T10:37:30.000Z","tool_name":"read_file","tool_id":"t2","parameters":{"absolute_path":"/tmp/b"}}
{"type":"result","timestamp":"2025-10-29T10:37:29.000Z","status":"success","stats":{"total_tokens":3,"input_tokens":2,"output_tokens":1,"duration_ms":30000,"tool_calls":2}}
`

func TestReplayPace(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	for _, tc := range []struct {
		name   string
		replay demo.Replay
		want   []time.Duration
	}{
		{"recorded", demo.Replay{}, []time.Duration{0, ms(1000), ms(1150), ms(4000), ms(4000)}},
		{"twice as fast", demo.Replay{Speed: 2}, []time.Duration{0, ms(500), ms(575), ms(2000), ms(2000)}},
		{"options", demo.Replay{MaxGap: 10 * time.Second, Delay: ms(2000)}, []time.Duration{0, ms(1000), ms(3000), ms(11000), ms(11000)}},
		{"no waits", demo.Replay{Speed: -1}, []time.Duration{0, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &stampWriter{start: time.Now()}
				if err := tc.replay.Run(t.Context(), w, []byte(paced)); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, w.offset); diff != "" {
					t.Errorf("write times (-want +got):\n%s", diff)
				}
				if got := strings.Join(w.lines, ""); got != paced {
					t.Errorf("replayed lines differ from the recording:\n%s", cmp.Diff(paced, got))
				}
			})
		})
	}
}

func TestReplayWithoutTimes(t *testing.T) {
	// Codex exec lines carry no time: every line waits the delay.
	data, err := demo.Read("ceedaragents-cyrus-codex-exec-sample-curated")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		w := &stampWriter{start: time.Now()}
		if err := (demo.Replay{}).Run(t.Context(), w, data); err != nil {
			t.Fatal(err)
		}
		for i, off := range w.offset {
			if want := time.Duration(i) * demo.DefaultDelay; off != want {
				t.Errorf("line %d written at %v, want %v", i+1, off, want)
			}
		}
		if got := strings.Join(w.lines, ""); got != string(data) {
			t.Errorf("replayed lines differ from the recording")
		}
	})
}

func TestReplayCancel(t *testing.T) {
	data, err := demo.Read(demo.Live)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		w := &stampWriter{start: time.Now()}
		done := make(chan error)
		go func() { done <- (demo.Replay{}).Run(ctx, w, data) }()
		time.Sleep(time.Second)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run after cancel = %v, want context.Canceled", err)
		}
		if n := len(w.lines); n == 0 || n >= bytes.Count(data, []byte("\n")) {
			t.Errorf("%d lines written in the first second, want some but not all", n)
		}
	})
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestReplayWriteError(t *testing.T) {
	err := (demo.Replay{Speed: -1}).Run(context.Background(), failWriter{}, []byte(paced))
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("Run = %v, want the write error", err)
	}
}
