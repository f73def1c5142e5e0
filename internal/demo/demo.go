// Package demo holds what `agentstream demo` shows: recorded sessions of
// several harnesses, embedded in the binary (see sessions/SOURCES.md for
// where each comes from), and the replay harness, which prints a recording
// at its recorded pace so that the real runner reads it as it would read an
// agent at work.
package demo

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

//go:embed sessions/*.jsonl
var files embed.FS

// Live is the recording the demo replays live through the runner: a Claude
// Code plan-mode turn with thinking, tool calls and a permission request.
const Live = "tandemtechnology-bb-stdout-plan-mode"

// Imports returns the recordings the demo stores as finished sessions, in
// the order it imports them: a Claude Code run with a subagent, a Claude
// Code failure, and runs of Codex, Gemini CLI, opencode and Copilot CLI.
func Imports() []string {
	return []string{
		"tandemtechnology-bb-stdout-subagent",
		"tandemtechnology-bb-stdout-auth-failure",
		"ceedaragents-cyrus-codex-exec-sample-curated",
		"jnarowski-agentcmd-docs-stream-json-edit-file",
		"banteg-takopi-opencode-stream-success",
		"sortie-ai-sortie-copilot-tool-use-session",
	}
}

// Names returns the names of every embedded recording (file names without
// ".jsonl"), sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, "sessions")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Read returns the native lines of the embedded recording name (with or
// without ".jsonl"). The error wraps fs.ErrNotExist for an unknown name.
func Read(name string) ([]byte, error) {
	name = strings.TrimSuffix(name, ".jsonl")
	if name == "" || strings.ContainsAny(name, `/\`) || !fs.ValidPath(name) {
		return nil, fmt.Errorf("demo: no recording %q: %w", name, fs.ErrNotExist)
	}
	b, err := files.ReadFile(path.Join("sessions", name+".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("demo: no recording %q: %w", name, fs.ErrNotExist)
	}
	return b, nil
}

// Protocol returns the protocol of a recording, detected from its first
// lines (adapter.Detect).
func Protocol(data []byte) string {
	var lines [][]byte
	for line := range bytes.Lines(data) {
		lines = append(lines, line)
		if len(lines) == 4*adapter.DetectLines {
			break
		}
	}
	return adapter.Detect(lines)
}

// Defaults of Replay.
const (
	// DefaultMaxGap caps the wait between two lines that carry their own
	// times: a recording that paused for minutes replays in seconds.
	DefaultMaxGap = 3 * time.Second
	// DefaultDelay is the wait before a line that carries no time.
	DefaultDelay = 150 * time.Millisecond
)

// Replay prints a recording's lines at the pace they were recorded. The
// zero value replays at the recorded speed with the default gaps.
type Replay struct {
	// Speed divides every wait: 2 plays twice as fast. Zero means 1; a
	// negative or infinite speed means no waits at all.
	Speed float64
	// MaxGap caps the wait between two lines with times of their own; zero
	// means DefaultMaxGap.
	MaxGap time.Duration
	// Delay is the wait before a line that carries no time of its own; zero
	// means DefaultDelay.
	Delay time.Duration
}

// Run writes the lines of data to w, each in one Write with its newline,
// waiting before each line but the first. A line's time is the time its
// dialect's adapter reads from it (the dialect is detected from the first
// lines). A line with a time is written when that much time, capped to
// MaxGap, has passed since the last line with a time was written; a line
// without one waits Delay. Both waits are divided by Speed.
//
// Run returns ctx's error when ctx ends first, or the first write error.
// Its waits use the time package's clock, so a test drives it with
// testing/synctest.
func (r Replay) Run(ctx context.Context, w io.Writer, data []byte) error {
	speed := r.Speed
	if speed == 0 {
		speed = 1
	}
	maxGap, delay := r.MaxGap, r.Delay
	if maxGap <= 0 {
		maxGap = DefaultMaxGap
	}
	if delay <= 0 {
		delay = DefaultDelay
	}
	scale := func(d time.Duration) time.Duration {
		if speed < 0 || math.IsInf(speed, 0) || math.IsNaN(speed) {
			return 0
		}
		return time.Duration(float64(d) / speed)
	}
	a, err := adapter.Lookup(Protocol(data))
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: "replay", Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	var (
		envs       []agentstream.Envelope
		buf        []byte
		num        int64
		lastTS     time.Time // the time of the last line with one
		lastTSWall time.Time // when that line was written
	)
	for line := range bytes.Lines(data) {
		num++
		body := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		envs = n.Line(envs[:0], agentstream.Line{N: num, Bytes: body, Size: int64(len(body))}, time.Time{})
		var ts time.Time
		for _, e := range envs {
			if !e.TS.IsZero() {
				ts = e.TS
				break
			}
		}
		if num > 1 {
			wait := scale(delay)
			if !ts.IsZero() && !lastTS.IsZero() {
				gap := min(max(ts.Sub(lastTS), 0), maxGap)
				wait = time.Until(lastTSWall.Add(scale(gap)))
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
		buf = append(append(buf[:0], body...), '\n')
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("demo: replay: %w", err)
		}
		if !ts.IsZero() {
			lastTS, lastTSWall = ts, time.Now()
		}
	}
	return nil
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
