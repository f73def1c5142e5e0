package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

// transcriptDir and labTranscriptDir hold recorded Claude Code
// transcripts: older versions' from other projects, and the lab's of
// today's version.
const (
	transcriptDir    = "../../adapter/claude/testdata/corpus/transcripts/"
	labTranscriptDir = "../../adapter/claude/testdata/lab/transcripts/"
)

// localTranscripts are the recorded transcripts a test $HOME holds, by
// their place under ~/.claude/projects.
var localTranscripts = map[string]string{
	"-home-u-viewer/2c7a1d0e-0000-4000-8000-000000000001.jsonl":                                  "d-kimuson-claude-code-viewer-1.0.98-session-head.jsonl",
	"-home-u-spotter/4d5611e5-0000-4000-8000-000000000002.jsonl":                                 "marot-spotter-short-2.1.38.jsonl",
	"-home-u-spotter/4d5611e5-0000-4000-8000-000000000003.jsonl":                                 "marot-spotter-tool-heavy-2.1.38.jsonl",
	"-home-u-spotter/4d5611e5-0000-4000-8000-000000000004.jsonl":                                 "marot-spotter-subagent-2.1.38.jsonl",
	"-home-u-spotter/4d5611e5-0000-4000-8000-000000000004/subagents/agent-acompact-e1f845.jsonl": "marot-spotter-4d5611e5-subagents-agent-acompact-e1f845-2.1.39.jsonl",
	"-lab-work/77aeb31c-6a2e-4eb2-80cb-068afc740a9f.jsonl":                                       "lab:claude-2.1.328-text.jsonl",
	"-lab-work/76b03655-842b-4cee-9b2f-cfd9918bdbc2.jsonl":                                       "lab:claude-2.1.328-shell.jsonl",
	"-lab-work/ca25e414-ac12-48a1-afbc-bef5f666d679.jsonl":                                       "lab:claude-2.1.328-subagent.jsonl",
	"-lab-work/ca25e414-ac12-48a1-afbc-bef5f666d679/subagents/agent-a9b8066ce9771ed3e.jsonl":     "lab:claude-2.1.328-subagent-agent.jsonl",
}

// fixturePath returns where a fixture of localTranscripts is.
func fixturePath(name string) string {
	if lab, ok := strings.CutPrefix(name, "lab:"); ok {
		return labTranscriptDir + lab
	}
	return transcriptDir + name
}

// claudeHome builds a $HOME whose ~/.claude/projects holds the recorded
// transcripts, and returns it.
func claudeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for rel, fixture := range localTranscripts {
		data, err := os.ReadFile(fixturePath(fixture))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(home, ".claude", "projects", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// tokenTotals are the four token counts a usage report and ccusage share.
type tokenTotals struct {
	Input, Output, CacheRead, CacheWrite int64
}

// transcriptTokens reads the totals of transcripts from their lines: each
// model call (an assistant message id) once, with the usage of its last
// line, which is the call's count as the harness last wrote it.
func transcriptTokens(t *testing.T, files ...string) tokenTotals {
	t.Helper()
	var sum tokenTotals
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		type usage struct {
			Input      int64 `json:"input_tokens"`
			Output     int64 `json:"output_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
		}
		last := map[string]usage{}
		var order []string
		for _, l := range bytes.Split(data, []byte("\n")) {
			var line struct {
				Type    string `json:"type"`
				Message struct {
					ID    string `json:"id"`
					Usage *usage `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(l, &line) != nil || line.Type != "assistant" || line.Message.Usage == nil {
				continue
			}
			if _, ok := last[line.Message.ID]; !ok {
				order = append(order, line.Message.ID)
			}
			last[line.Message.ID] = *line.Message.Usage
		}
		for _, id := range order {
			u := last[id]
			sum.Input += u.Input
			sum.Output += u.Output
			sum.CacheRead += u.CacheRead
			sum.CacheWrite += u.CacheWrite
		}
	}
	return sum
}

// usageTotals returns the total row of usage --by day --json.
func usageTotals(t *testing.T, db string) tokenTotals {
	t.Helper()
	out, stderr, code := runCLI(t, "", "usage", "--db", db, "--by", "day", "--json")
	if code != exitOK {
		t.Fatalf("usage: exit %d: %s", code, stderr)
	}
	var rep struct {
		Total struct {
			Input      int64 `json:"inputTokens"`
			Output     int64 `json:"outputTokens"`
			CacheRead  int64 `json:"cacheReadTokens"`
			CacheWrite int64 `json:"cacheCreationTokens"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("usage --json: %v: %s", err, out)
	}
	return tokenTotals{rep.Total.Input, rep.Total.Output, rep.Total.CacheRead, rep.Total.CacheWrite}
}

// localHome points $HOME at home for the test, with no harness directory
// set apart.
func localHome(t *testing.T, home string) {
	t.Setenv("HOME", home)
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "COPILOT_HOME", "CODEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"} {
		t.Setenv(k, "")
	}
}

// localEnv is the environment of a child with $HOME at home and no harness
// directory set apart, then extra (which wins).
func localEnv(home string, extra ...string) []string {
	env := append(os.Environ(), "HOME="+home, "CLAUDE_CONFIG_DIR=", "COPILOT_HOME=", "CODEX_HOME=", "XDG_DATA_HOME=", "XDG_CONFIG_HOME=")
	return append(env, extra...)
}

// TestImportLocal: import --local imports every transcript under
// ~/.claude/projects once, with its own title and each model call's tokens
// once; again, nothing; a transcript that grew replaces its session, under
// the same id; a line still being written waits; --since skips old files.
func TestImportLocal(t *testing.T) {
	home := claudeHome(t)
	localHome(t, home)
	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "\timported\t"); n != len(localTranscripts) {
		t.Errorf("%d files imported, want %d:\n%s", n, len(localTranscripts), out)
	}
	var files []string
	for rel := range localTranscripts {
		files = append(files, filepath.Join(home, ".claude", "projects", filepath.FromSlash(rel)))
	}
	want := transcriptTokens(t, files...)
	t.Logf("tokens from the lines: %+v", want)
	if got := usageTotals(t, db); got != want {
		t.Errorf("usage totals %+v, want %+v (each call once, from the lines)", got, want)
	}

	// The older transcript's summary line is its title.
	viewer := files[0]
	for _, f := range files {
		if strings.Contains(f, "-home-u-viewer") {
			viewer = f
		}
	}
	var summary struct{ Summary string }
	for _, l := range strings.Split(readString(t, viewer), "\n") {
		if strings.Contains(l, `"type":"summary"`) {
			json.Unmarshal([]byte(l), &summary)
			break
		}
	}
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := st.Session(ctx, localID("claude-code", viewer))
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if summary.Summary == "" || sess.Title != summary.Summary {
		t.Errorf("title %q, want the summary line's %q", sess.Title, summary.Summary)
	}
	if sess.Labels["import.path"] != viewer {
		t.Errorf("label import.path %q, want %q", sess.Labels["import.path"], viewer)
	}

	// Again: nothing new.
	out, stderr, code = runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK || out != "" || !strings.Contains(stderr, fmt.Sprintf("0 imported or updated, %d unchanged", len(localTranscripts))) {
		t.Errorf("second import: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	// A transcript that grew, its last line not yet complete.
	grown := filepath.Join(home, ".claude", "projects", "-home-u-grow", "9e000000-0000-4000-8000-000000000005.jsonl")
	full := readString(t, transcriptDir+"marot-spotter-tool-heavy-2.1.38.jsonl")
	lines := strings.SplitAfter(strings.TrimRight(full, "\n"), "\n")
	half := len(lines) / 2
	os.MkdirAll(filepath.Dir(grown), 0o755)
	if err := os.WriteFile(grown, []byte(strings.Join(lines[:half], "")+lines[half][:10]), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runCLI(t, "", "import", "--local", "--db", db)
	id := localID("claude-code", grown)
	if !strings.HasPrefix(out, id+"\tclaude-code\timported\t") {
		t.Errorf("new file: stdout %q, want %s imported", out, id)
	}
	if n := storedLines(t, db, id); n != half {
		t.Errorf("%d lines stored of a file of %d complete lines", n, half)
	}
	if err := os.WriteFile(grown, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runCLI(t, "", "import", "--local", "--db", db)
	if !strings.HasPrefix(out, id+"\tclaude-code\tupdated\t") {
		t.Errorf("grown file: stdout %q, want %s updated", out, id)
	}
	if n := storedLines(t, db, id); n != len(lines) {
		t.Errorf("%d lines stored after growing, want %d", n, len(lines))
	}
	sessOut, _, _ := runCLI(t, "", "sessions", "--db", db, "--json")
	if n := strings.Count(sessOut, `"id":`); n != len(localTranscripts)+1 {
		t.Errorf("%d sessions, want %d (one per file)", n, len(localTranscripts)+1)
	}

	// ~/.config/claude is looked in too, and $CLAUDE_CONFIG_DIR instead of
	// both.
	xdg := filepath.Join(home, ".config", "claude", "projects", "-home-u-xdg", "3c000000-0000-4000-8000-000000000009.jsonl")
	os.MkdirAll(filepath.Dir(xdg), 0o755)
	os.WriteFile(xdg, []byte(readString(t, transcriptDir+"marot-spotter-short-2.1.38.jsonl")), 0o644)
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, ".config", "claude"))
	if out, _, _ := runCLI(t, "", "import", "--local", "--db", db); !strings.Contains(out, xdg) || strings.Count(out, "\n") != 1 {
		t.Errorf("with CLAUDE_CONFIG_DIR: imported %q, want %s alone", out, xdg)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	if out, stderr, _ := runCLI(t, "", "import", "--local", "--db", db); out != "" || !strings.Contains(stderr, fmt.Sprintf("%d unchanged", len(localTranscripts)+2)) {
		t.Errorf("~/.claude and ~/.config/claude: imported %q, stderr %q, want nothing new", out, stderr)
	}

	// --since: an old file is skipped.
	old := filepath.Join(home, ".claude", "projects", "-home-u-old", "0d000000-0000-4000-8000-000000000006.jsonl")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte(readString(t, transcriptDir+"marot-spotter-short-2.1.38.jsonl")), 0o644)
	long := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(old, long, long)
	if out, _, _ := runCLI(t, "", "import", "--local", "--since", "7d", "--db", db); out != "" {
		t.Errorf("--since 7d imported %q, want nothing", out)
	}
	if out, _, _ := runCLI(t, "", "import", "--local", "--since", "60d", "--db", db); !strings.Contains(out, old) {
		t.Errorf("--since 60d imported %q, want %s", out, old)
	}

	for _, args := range [][]string{
		{"import", "--local", "--db", db, "x.jsonl"},
		{"import", "--local", "--id", "s_x", "--db", db},
		{"import", "--watch", "--db", db, "x.jsonl"},
		{"import", "--since", "7d", "--db", db, "x.jsonl"},
		{"import", "--local", "--harness", "nobody", "--db", db},
	} {
		if _, stderr, code := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %q", args, code, exitUsage, stderr)
		}
	}
}

func readString(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// storedLines counts a session's stored native lines.
func storedLines(t *testing.T, db, id string) int {
	t.Helper()
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	if err := st.Lines(context.Background(), id, func(store.Line) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestImportLocalWatch: --watch imports what is there, then a file that
// appears, names a file it cannot import once, and stops cleanly (exit 0)
// on Ctrl-C.
func TestImportLocalWatch(t *testing.T) {
	home := claudeHome(t)
	bad := filepath.Join(home, ".claude", "projects", "-home-u-bad", "0b000000-0000-4000-8000-000000000008.jsonl")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	if err := os.WriteFile(bad, []byte("\x00\x01\x02 not text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "a.db")
	cmd := exec.Command(binary, "import", "--local", "--watch", "--interval", "100ms", "--db", db)
	cmd.Env = localEnv(home)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	poll(t, "the first import", 15*time.Second, func() bool {
		return strings.Count(stdout.String(), "\timported\t") == len(localTranscripts)
	})
	late := filepath.Join(home, ".claude", "projects", "-home-u-late", "1a000000-0000-4000-8000-000000000007.jsonl")
	os.MkdirAll(filepath.Dir(late), 0o755)
	os.WriteFile(late, []byte(readString(t, transcriptDir+"marot-spotter-short-2.1.38.jsonl")), 0o644)
	poll(t, "the new file", 15*time.Second, func() bool { return strings.Contains(stdout.String(), late) })
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, "after Ctrl-C"); code != exitOK || !strings.Contains(stderr.String(), "stopped") {
		t.Errorf("exit %d after Ctrl-C, stderr %q", code, stderr.String())
	}
	if n := strings.Count(stdout.String(), "\timported\t"); n != len(localTranscripts)+1 {
		t.Errorf("%d imports, want each file once:\n%s", n, stdout.String())
	}
	if n := strings.Count(stderr.String(), bad); n != 1 {
		t.Errorf("the binary file named %d times, want once (until it changes):\n%s", n, stderr.String())
	}
}

// TestProgressOnTerminal: import, normalize and renormalize of a file
// draw their progress (bytes of the total, lines, rate) on a terminal's
// stderr, and nothing on a pipe.
func TestProgressOnTerminal(t *testing.T) {
	file := transcriptDir + "marot-spotter-tool-heavy-2.1.38.jsonl"
	data := readString(t, file)
	nlines := strings.Count(data, "\n")
	db := filepath.Join(t.TempDir(), "a.db")
	var env []string
	onTTY := func(args ...string) string {
		t.Helper()
		term, tty, err := pty.Open()
		if err != nil {
			t.Skip("no pseudo-terminal:", err)
		}
		defer term.Close()
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		var stdout syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var got bytes.Buffer
		r := bufio.NewReader(term)
		done := make(chan struct{})
		go func() { got.ReadFrom(r); close(done) }()
		if code := waitExit(t, cmd, args[0]); code != exitOK {
			t.Fatalf("%v: exit %d", args, code)
		}
		term.Close()
		<-done
		return got.String()
	}
	total := sizeText(int64(len(data)))
	for _, args := range [][]string{
		{"import", "--db", db, file},
		{"normalize", file},
	} {
		got := onTTY(args...)
		want := args[0] + " " + file + ": " + total + " of " + total + " (100%), " + strconv.Itoa(nlines) + " lines"
		if !strings.Contains(got, want) {
			t.Errorf("%s on a terminal: stderr %q, want %q", args[0], got, want)
		}
	}
	id := localID("x", "y")
	out, _, _ := runCLI(t, "", "import", "--id", id, "--db", db, file)
	if strings.TrimSpace(out) != id {
		t.Fatalf("import --id: %q", out)
	}
	if got := onTTY("renormalize", "--db", db, id); !strings.Contains(got, "renormalize "+id+": ") || !strings.Contains(got, strconv.Itoa(nlines)+" lines") {
		t.Errorf("renormalize on a terminal: stderr %q, want %d lines", got, nlines)
	}
	// import --local: one progress over the files.
	home := claudeHome(t)
	env = localEnv(home)
	var size, n int64
	for _, fixture := range localTranscripts {
		data := readString(t, fixturePath(fixture))
		size += int64(len(data))
		n += int64(strings.Count(data, "\n"))
	}
	got := onTTY("import", "--local", "--db", filepath.Join(t.TempDir(), "l.db"))
	want := fmt.Sprintf("import --local %d/%d: %s of %s (100%%), %d lines", len(localTranscripts), len(localTranscripts), sizeText(size), sizeText(size), n)
	if !strings.Contains(got, want) {
		t.Errorf("import --local on a terminal: stderr %q, want %q", got, want)
	}

	// On a pipe: no progress.
	_, stderr, _ := runCLI(t, "", "normalize", file)
	if strings.Contains(stderr, "lines") || strings.Contains(stderr, "\r") {
		t.Errorf("normalize on a pipe: stderr %q", stderr)
	}
}

// TestImportLocalInterrupted: Ctrl-C stops import --local (exit 130)
// without leaving a session cut short: the next run imports the rest, and
// the totals are those of every file's lines, once.
func TestImportLocalInterrupted(t *testing.T) {
	home := t.TempDir()
	var files []string
	for k := range 20 {
		for rel, fixture := range localTranscripts {
			p := filepath.Join(home, ".claude", "projects", fmt.Sprintf("-copy-%d", k)+rel[strings.Index(rel, "/"):])
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(readString(t, fixturePath(fixture))), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
	}
	db := filepath.Join(t.TempDir(), "a.db")
	cmd := exec.Command(binary, "import", "--local", "--db", db)
	cmd.Env = localEnv(home)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	poll(t, "a first import", 15*time.Second, func() bool { return strings.Contains(stdout.String(), "\timported\t") })
	cmd.Process.Signal(syscall.SIGINT)
	code := waitExit(t, cmd, "after Ctrl-C")
	first := strings.Count(stdout.String(), "\timported\t")
	if first == len(files) {
		t.Skip("the import ended before Ctrl-C")
	}
	if code != exitAborted || !strings.Contains(stderr.String(), "interrupted after") {
		t.Errorf("exit %d after Ctrl-C, want %d; stderr %q", code, exitAborted, stderr.String())
	}
	localHome(t, home)
	out, errOut, code := runCLI(t, "", "import", "--local", "--db", db)
	if n := strings.Count(out, "\timported\t"); code != exitOK || first+n != len(files) {
		t.Errorf("the next run: exit %d, %d imported after %d, want %d in all; stderr %q", code, n, first, len(files), errOut)
	}
	if got, want := usageTotals(t, db), transcriptTokens(t, files...); got != want {
		t.Errorf("usage totals %+v, want %+v from the lines", got, want)
	}
}

// TestImportLocalCopilot: import --local imports Copilot CLI's session
// file under ~/.copilot/session-state, as a copilot-cli session titled by
// its prompt and holding its lines.
func TestImportLocalCopilot(t *testing.T) {
	home := t.TempDir()
	localHome(t, home)
	data := readString(t, "../../adapter/copilot/testdata/lab/session-state/copilot-1.0.102-text-events.jsonl")
	p := filepath.Join(home, ".copilot", "session-state", "aa3c6d51-ffb7-4210-9e88-d024ee8abea7", "events.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var prompt string
	for _, l := range strings.Split(data, "\n") {
		var line struct {
			Type string
			Data struct{ Content string }
		}
		if json.Unmarshal([]byte(l), &line) == nil && line.Type == "user.message" {
			prompt = line.Data.Content
			break
		}
	}
	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--harness", "copilot-cli", "--db", db)
	id := localID("copilot-cli", p)
	if code != exitOK || out != id+"\tcopilot-cli\timported\t"+p+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Session(context.Background(), id)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if prompt == "" || sess.Harness != "copilot-cli" || sess.Protocol != "copilot-json" || sess.Title != prompt {
		t.Errorf("session %s/%s titled %q, want copilot-cli/copilot-json titled %q", sess.Harness, sess.Protocol, sess.Title, prompt)
	}
	if n := storedLines(t, db, id); n != strings.Count(data, "\n") {
		t.Errorf("%d lines stored, want %d", n, strings.Count(data, "\n"))
	}
}

// codexRollouts are the lab's Codex rollouts (adapter/codex/testdata/rollout,
// whose SOURCES.md gives where Codex wrote them), by their path under
// ~/.codex/sessions.
var codexRollouts = map[string]string{
	"2026/12/02/rollout-2026-12-02T02-53-04-01a234ab-8212-7af2-8ca5-50b4c33107cf.jsonl": "codex-0.169.0-shell-rollout.jsonl",
	"2026/12/02/rollout-2026-12-02T02-53-03-01a234ab-7e67-7110-9b4b-675d09ff2197.jsonl": "codex-0.169.0-text-rollout.jsonl",
	"2026/12/02/rollout-2026-12-02T02-53-11-01a234ab-9ae5-74c1-b220-a4a9eb7258a0.jsonl": "codex-0.169.0-edit-rollout.jsonl",
	"2026/12/02/rollout-2026-12-02T02-53-03-01a234ab-7c46-7650-b565-07494660228a.jsonl": "codex-0.169.0-toolfail-rollout.jsonl",
}

// rolloutTokens reads a rollout's totals from its lines: its last
// token_count's running total, input less the cached input.
func rolloutTokens(t *testing.T, data string) tokenTotals {
	t.Helper()
	var sum tokenTotals
	for _, l := range strings.Split(data, "\n") {
		var line struct {
			Type    string
			Payload struct {
				Type string
				Info struct {
					Total struct {
						Input      int64 `json:"input_tokens"`
						Cached     int64 `json:"cached_input_tokens"`
						CacheWrite int64 `json:"cache_write_input_tokens"`
						Output     int64 `json:"output_tokens"`
					} `json:"total_token_usage"`
				}
			}
		}
		if json.Unmarshal([]byte(l), &line) != nil || line.Type != "event_msg" || line.Payload.Type != "token_count" {
			continue
		}
		u := line.Payload.Info.Total
		sum = tokenTotals{u.Input - u.Cached - u.CacheWrite, u.Output, u.Cached, u.CacheWrite}
	}
	return sum
}

// TestImportLocalCodex: import --local imports Codex's rollouts under
// ~/.codex/sessions (and $CODEX_HOME instead), each a codex session of the
// codex-rollout protocol with its thread's id, model, prompt and every line,
// and each rollout's tokens once.
func TestImportLocalCodex(t *testing.T) {
	home := t.TempDir()
	localHome(t, home)
	var want tokenTotals
	var paths []string
	for rel, fixture := range codexRollouts {
		data := readString(t, "../../adapter/codex/testdata/rollout/"+fixture)
		p := filepath.Join(home, ".codex", "sessions", filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		tok := rolloutTokens(t, data)
		want.Input += tok.Input
		want.Output += tok.Output
		want.CacheRead += tok.CacheRead
		want.CacheWrite += tok.CacheWrite
	}
	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--harness", "codex", "--db", db)
	if code != exitOK || strings.Count(out, "\tcodex\timported\t") != len(paths) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d imported", code, out, stderr, len(paths))
	}
	if want.Input == 0 || want.Output == 0 {
		t.Fatalf("the rollouts hold no token counts: %+v", want)
	}
	if got := usageTotals(t, db); got != want {
		t.Errorf("usage totals %+v, want %+v from the token_count lines", got, want)
	}
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range paths {
		data := readString(t, p)
		var meta struct{ Payload struct{ ID, Cwd string } }
		json.Unmarshal([]byte(data[:strings.Index(data, "\n")]), &meta)
		var prompt, model string
		for _, l := range strings.Split(data, "\n") {
			var line struct {
				Type    string
				Payload struct {
					Type, Model string
					Item        struct {
						Type    string
						Content []struct{ Text string }
					}
				}
			}
			json.Unmarshal([]byte(l), &line)
			switch {
			case line.Type == "turn_context" && model == "":
				model = line.Payload.Model
			case line.Payload.Type == "item_completed" && line.Payload.Item.Type == "UserMessage" && prompt == "":
				prompt = line.Payload.Item.Content[0].Text
			}
		}
		id := localID("codex", p)
		sess, err := st.Session(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if sess.Harness != "codex" || sess.Protocol != "codex-rollout" || sess.Title != prompt || sess.Model != model || sess.Cwd != meta.Payload.Cwd {
			t.Errorf("%s: session %s/%s titled %q, model %q, cwd %q; want codex/codex-rollout titled %q, model %q, cwd %q",
				filepath.Base(p), sess.Harness, sess.Protocol, sess.Title, sess.Model, sess.Cwd, prompt, model, meta.Payload.Cwd)
		}
		if n := storedLines(t, db, id); n != strings.Count(data, "\n") {
			t.Errorf("%s: %d lines stored, want %d", filepath.Base(p), n, strings.Count(data, "\n"))
		}
	}

	// $CODEX_HOME instead of ~/.codex.
	other := filepath.Join(t.TempDir(), "codex")
	p := filepath.Join(other, "sessions", "2026", "12", "03", "rollout-2026-12-03T00-00-00-x.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(readString(t, paths[0])), 0o644)
	t.Setenv("CODEX_HOME", other)
	if out, _, _ := runCLI(t, "", "import", "--local", "--harness", "codex", "--db", db); out != localID("codex", p)+"\tcodex\timported\t"+p+"\n" {
		t.Errorf("with CODEX_HOME: stdout %q, want %s alone", out, p)
	}
}

// geminiChats are the lab's Gemini CLI chats (adapter/gemini/testdata/chats,
// whose SOURCES.md gives where Gemini CLI wrote them), by their path under
// ~/.gemini/tmp.
var geminiChats = map[string]string{
	"work/chats/session-2026-12-02T02-52-84587b52.jsonl": "gemini-0.61.0-shell-chat.jsonl",
	"work/chats/session-2026-12-02T02-52-a1c2b3d4.jsonl": "gemini-0.61.0-text-chat.jsonl",
	"work/chats/session-2026-12-02T02-53-5c70b23b.jsonl": "gemini-0.61.0-edit-chat.jsonl",
	"work/chats/session-2026-12-02T02-52-e5f6a7b8.jsonl": "gemini-0.61.0-toolfail-chat.jsonl",
}

// chatRecord is what the test reads of a chat's message.
type chatRecord struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Model     string          `json:"model,omitempty"`
	Content   json.RawMessage `json:"content"`
	Tokens    *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
	} `json:"tokens,omitempty"`
	ToolCalls json.RawMessage `json:"toolCalls,omitempty"`
}

// chatTokens adds up a chat's model messages' tokens, each message id once:
// input less the cached input plus the tool-use prompt, output with the
// thoughts.
func chatTokens(msgs []chatRecord) tokenTotals {
	var sum tokenTotals
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.Type != "gemini" || m.Tokens == nil || seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		sum.Input += m.Tokens.Input - m.Tokens.Cached + m.Tokens.Tool
		sum.Output += m.Tokens.Output + m.Tokens.Thoughts
		sum.CacheRead += m.Tokens.Cached
	}
	return sum
}

// chatPrompt is a chat's first user text that is not a tagged block Gemini
// CLI wrote itself, and the model of its first model message.
func chatPrompt(msgs []chatRecord) (prompt, model string) {
	for _, m := range msgs {
		var parts []struct{ Text string }
		json.Unmarshal(m.Content, &parts)
		if m.Type == "user" && prompt == "" && len(parts) > 0 && !strings.HasPrefix(parts[0].Text, "<session_context>") {
			prompt = parts[0].Text
		}
		if m.Type == "gemini" && model == "" {
			model = m.Model
		}
	}
	return prompt, model
}

// TestImportLocalGemini: import --local imports Gemini CLI's chats under
// ~/.gemini/tmp/*/chats, the JSONL of today's builds and an older build's
// one JSON document (indented, no final newline), each a gemini-cli
// session of the gemini-chat protocol with its prompt, model and every
// line, and each model message's tokens once.
func TestImportLocalGemini(t *testing.T) {
	home := t.TempDir()
	localHome(t, home)
	var want tokenTotals
	add := func(tok tokenTotals) {
		want.Input += tok.Input
		want.Output += tok.Output
		want.CacheRead += tok.CacheRead
	}
	files := map[string][]chatRecord{}
	var doc struct {
		SessionID   string       `json:"sessionId"`
		ProjectHash string       `json:"projectHash"`
		StartTime   string       `json:"startTime"`
		Messages    []chatRecord `json:"messages"`
	}
	for rel, fixture := range geminiChats {
		data := readString(t, "../../adapter/gemini/testdata/chats/"+fixture)
		p := filepath.Join(home, ".gemini", "tmp", filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		var msgs []chatRecord
		for _, l := range strings.Split(strings.TrimSpace(data), "\n")[1:] {
			var m chatRecord
			if json.Unmarshal([]byte(l), &m) == nil && m.Type != "" {
				msgs = append(msgs, m)
			}
		}
		files[p] = msgs
		add(chatTokens(msgs))
		if strings.Contains(fixture, "-shell-") {
			// The older builds' document: the metadata and each message
			// as last written.
			json.Unmarshal([]byte(data[:strings.Index(data, "\n")]), &doc)
			doc.SessionID = "0d0c0000-0000-4000-8000-000000000001"
			at := map[string]int{}
			for _, m := range msgs {
				if i, ok := at[m.ID]; ok {
					doc.Messages[i] = m
					continue
				}
				at[m.ID] = len(doc.Messages)
				doc.Messages = append(doc.Messages, m)
			}
		}
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	docPath := filepath.Join(home, ".gemini", "tmp", "older", "chats", "session-2025-08-01T10-00-0d0c0000.json")
	os.MkdirAll(filepath.Dir(docPath), 0o755)
	if err := os.WriteFile(docPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	files[docPath] = doc.Messages
	add(chatTokens(doc.Messages))

	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--harness", "gemini-cli", "--db", db)
	if code != exitOK || strings.Count(out, "\tgemini-cli\timported\t") != len(files) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d imported", code, out, stderr, len(files))
	}
	if want.Input == 0 || want.Output == 0 {
		t.Fatalf("the chats hold no tokens: %+v", want)
	}
	if got := usageTotals(t, db); got != want {
		t.Errorf("usage totals %+v, want %+v from the messages' tokens", got, want)
	}
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for p, msgs := range files {
		prompt, model := chatPrompt(msgs)
		id := localID("gemini-cli", p)
		sess, err := st.Session(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if prompt == "" || sess.Harness != "gemini-cli" || sess.Protocol != "gemini-chat" || sess.Title != prompt || sess.Model != model {
			t.Errorf("%s: session %s/%s titled %q, model %q; want gemini-cli/gemini-chat titled %q, model %q",
				filepath.Base(p), sess.Harness, sess.Protocol, sess.Title, sess.Model, prompt, model)
		}
		data := readString(t, p)
		lines := strings.Count(data, "\n")
		if !strings.HasSuffix(data, "\n") {
			lines++
		}
		if n := storedLines(t, db, id); n != lines {
			t.Errorf("%s: %d lines stored, want %d", filepath.Base(p), n, lines)
		}
	}
}
