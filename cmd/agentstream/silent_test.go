package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/creack/pty"
)

// The cases of "no silent wrong results": each gets a clear error or the
// right answer.

// TestReadOnlyCommandsCreateNoDatabase runs the binary: a mistyped --db
// is an error naming the path, and neither the file nor its directory
// appears.
func TestReadOnlyCommandsCreateNoDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "typo", "x.db")
	for _, args := range [][]string{
		{"sessions"},
		{"show", "s_x"},
		{"export", "s_x"},
		{"usage", "s_x"},
		{"usage", "--by", "model"},
		{"renormalize", "s_x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(binary, append(args, "--db", db)...)
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); err == nil || code != exitError {
				t.Errorf("exit %d (%v), want %d", code, err, exitError)
			}
			if !strings.Contains(string(out), db) {
				t.Errorf("the error does not name %s:\n%s", db, out)
			}
			if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
				t.Errorf("%s was created", filepath.Dir(db))
			}
		})
	}
}

// TestUnknownProtocolIsUsage: every command that takes --protocol exits
// with the usage code on a name that is none, and says which are.
func TestUnknownProtocolIsUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	for _, args := range [][]string{
		{"normalize", basicQuery},
		{"render", basicQuery},
		{"usage", basicQuery},
		{"import", "--db", db, basicQuery},
		{"renormalize", "--db", db, "s_x"},
		{"run", "--no-store", "--", "true"},
		{"chat", "--no-store", "--", "true"},
	} {
		t.Run(args[0], func(t *testing.T) {
			args := append([]string{args[0], "--protocol", "no-such"}, args[1:]...)
			_, stderr, code := runCLI(t, "", args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, `unknown protocol "no-such"`) || !strings.Contains(stderr, "claude-json") {
				t.Errorf("stderr %q does not name the protocol and the known ones", stderr)
			}
		})
	}
}

func TestBadListenAddress(t *testing.T) {
	for _, cmd := range []string{"serve", "demo"} {
		for _, addr := range []string{"nonsense", "127.0.0.1", "8377"} {
			_, stderr, code := runCLI(t, "", cmd, "--addr", addr)
			if code != exitUsage || !strings.Contains(stderr, "want HOST:PORT") || strings.Contains(stderr, "loopback") {
				t.Errorf("%s --addr %s: exit %d, stderr %q", cmd, addr, code, stderr)
			}
		}
		_, stderr, code := runCLI(t, "", cmd, "--addr", "192.0.2.1:1")
		if code != exitUsage || !strings.Contains(stderr, "not a loopback address") {
			t.Errorf("%s --addr 192.0.2.1:1: exit %d, stderr %q", cmd, code, stderr)
		}
	}
}

// nonBlankLines counts the lines of a file that hold something.
func nonBlankLines(t *testing.T, name string) int {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// TestWrongProtocolUnderstoodNothing: a Claude recording read as Codex's
// is all raw lines; render and usage say so and fail, where render printed
// nothing and exited 0.
func TestWrongProtocolUnderstoodNothing(t *testing.T) {
	want := "none of the " + strconv.Itoa(nonBlankLines(t, basicQuery)) + " lines was understood as codex-json"
	for _, cmd := range []string{"render", "usage"} {
		stdout, stderr, code := runCLI(t, "", cmd, "--protocol", "codex-json", basicQuery)
		if code != exitError {
			t.Errorf("%s: exit %d, want %d", cmd, code, exitError)
		}
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, "--protocol claude-json") {
			t.Errorf("%s: stderr %q, want %q and the protocol they look like", cmd, stderr, want)
		}
		if cmd == "render" && stdout != "" {
			t.Errorf("render printed %q", stdout)
		}
	}
	// The right protocol, or auto, still renders.
	for _, p := range []string{"claude-json", "auto"} {
		if out, stderr, code := runCLI(t, "", "render", "--protocol", p, "--color", "never", basicQuery); code != exitOK || out == "" {
			t.Errorf("render --protocol %s: exit %d, %d bytes, stderr %q", p, code, len(out), stderr)
		}
	}
}

// TestEmptyOrBinaryFileIsNoSession runs the binary: import refuses an
// empty file, a blank one and a binary one (the agentstream binary
// itself), and stores no session.
func TestEmptyOrBinaryFileIsNoSession(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	exe, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"empty.jsonl":  nil,
		"blank.jsonl":  []byte("\n  \n\r\n"),
		"binary.jsonl": exe[:1<<16],
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "import", "--db", db, p)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if stdout.Len() > 0 || !strings.Contains(stderr.String(), p) {
				t.Errorf("stdout %q, stderr %q: want no id and an error naming the file", stdout.String(), stderr.String())
			}
			for _, cmd := range []string{"render", "usage"} {
				if _, errs, code := runCLI(t, "", cmd, p); code != exitError {
					t.Errorf("%s: exit %d, stderr %q", cmd, code, errs)
				}
			}
		})
	}
	out, errs, code := runCLI(t, "", "sessions", "--db", db, "--json")
	if code != exitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("sessions after the refused imports: exit %d, %s %s", code, out, errs)
	}
}

// storedSessions returns the sessions of db (their ids and times), through the
// sessions command's JSON.
func storedSessions(t *testing.T, db string) []store.Session {
	t.Helper()
	out, errs, code := runCLI(t, "", "sessions", "--db", db, "--json", "--limit", "0")
	if code != exitOK {
		t.Fatalf("sessions: exit %d: %s", code, errs)
	}
	var list []struct {
		ID        string    `json:"id"`
		StartedAt time.Time `json:"startedAt"`
		EndedAt   time.Time `json:"endedAt"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var ss []store.Session
	for _, s := range list {
		ss = append(ss, store.Session{ID: s.ID, StartedAt: s.StartedAt, EndedAt: s.EndedAt})
	}
	return ss
}

// importBinary runs the binary's import and returns the id it printed.
func importBinary(t *testing.T, db, stdin string, args ...string) (id, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"import", "--db", db}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("import %v: %v: %s", args, err, e.String())
	}
	return strings.TrimSpace(o.String()), e.String()
}

// TestImportIsIdempotent: the same content, by path, under another name or
// on stdin, is one session; other content is another.
func TestImportIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	data, err := os.ReadFile(turnTools)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "renamed.jsonl")
	if err := os.WriteFile(other, data, 0o644); err != nil {
		t.Fatal(err)
	}
	first, _ := importBinary(t, db, "", turnTools)
	again, stderr := importBinary(t, db, "", turnTools)
	renamed, _ := importBinary(t, db, "", other)
	piped, _ := importBinary(t, db, string(data), "-")
	for name, id := range map[string]string{"again": again, "renamed": renamed, "stdin": piped} {
		if id != first {
			t.Errorf("%s: id %s, want the first import's %s", name, id, first)
		}
	}
	if !strings.Contains(stderr, "already imported") {
		t.Errorf("the second import says %q, want that it was already imported", stderr)
	}
	if got := storedSessions(t, db); len(got) != 1 {
		t.Errorf("%d sessions after four imports of one content, want 1", len(got))
	}
	// One more line is other content: a session of its own.
	grown := filepath.Join(dir, "grown.jsonl")
	if err := os.WriteFile(grown, append(append([]byte(nil), data...), data[:strings.IndexByte(string(data), '\n')+1]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, _ := importBinary(t, db, "", grown); id == first {
		t.Errorf("a grown file got the first import's id %s", id)
	}
	if got := storedSessions(t, db); len(got) != 2 {
		t.Errorf("%d sessions, want 2", len(got))
	}
}

// lineTimes returns the first and last "timestamp" of a recording's lines,
// read with encoding/json.
func lineTimes(t *testing.T, name string) (first, last time.Time) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		var v struct {
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal([]byte(l), &v) == nil && !v.Timestamp.IsZero() {
			if first.IsZero() {
				first = v.Timestamp
			}
			last = v.Timestamp
		}
	}
	if first.IsZero() {
		t.Fatalf("%s: no timestamps", name)
	}
	return first, last
}

// TestImportTakesItsTimesFromTheLines: a session of timed lines starts and
// ends at their times, though the file was written now; one of untimed lines ends
// at the file's date and lasts the duration its harness reported, and
// counts on that day, not today.
func TestImportTakesItsTimesFromTheLines(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	old := time.Date(2020, 1, 2, 15, 4, 5, 0, time.UTC)
	copyDated := func(src string, mtime time.Time) string {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const timed = "../../adapter/claude/testdata/lab-claude-2.1.328-edits.jsonl"
	first, last := lineTimes(t, timed)
	timedID, _ := importBinary(t, db, "", copyDated(timed, time.Now()))

	// basicQuery's lines carry no times; its result reports duration_ms.
	data, _ := os.ReadFile(basicQuery)
	var reported time.Duration
	for _, l := range strings.Split(string(data), "\n") {
		var v struct {
			DurationMs int64 `json:"duration_ms"`
		}
		if json.Unmarshal([]byte(l), &v) == nil && v.DurationMs > 0 {
			reported = time.Duration(v.DurationMs) * time.Millisecond
		}
	}
	if reported == 0 || strings.Contains(string(data), `"timestamp"`) {
		t.Fatal("basicQuery changed: want untimed lines with a reported duration")
	}
	untimedID, _ := importBinary(t, db, "", copyDated(basicQuery, old))

	// Untimed lines, more than import reads before it creates the session,
	// then the timed ones: the session starts at the first time all the
	// same.
	head, _, _ := strings.Cut(string(data), "\n")
	timedData, err := os.ReadFile(timed)
	if err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "late.jsonl")
	if err := os.WriteFile(late, []byte(strings.Repeat(head+"\n", 300)+string(timedData)), 0o644); err != nil {
		t.Fatal(err)
	}
	lateID, _ := importBinary(t, db, "", late)

	got := map[string]store.Session{}
	for _, s := range storedSessions(t, db) {
		got[s.ID] = s
	}
	if s := got[lateID]; !s.StartedAt.Equal(first) || !s.EndedAt.Equal(last) {
		t.Errorf("session timed after 300 untimed lines %v to %v, want its timed lines' %v to %v", s.StartedAt, s.EndedAt, first, last)
	}
	if s := got[timedID]; !s.StartedAt.Equal(first) || !s.EndedAt.Equal(last) {
		t.Errorf("timed session %v to %v, want its lines' %v to %v", s.StartedAt, s.EndedAt, first, last)
	}
	if s := got[untimedID]; !s.StartedAt.Equal(old.Add(-reported)) || !s.EndedAt.Equal(old) {
		t.Errorf("untimed session %v to %v, want %v before the file's date %v", s.StartedAt, s.EndedAt, reported, old)
	}
	// Neither is today's: the timed file was written today, but its lines
	// are older.
	today := time.Now().UTC().Truncate(24 * time.Hour).Format(time.RFC3339)
	out, _, _ := runCLI(t, "", "sessions", "--db", db, "--since", today, "--json")
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("sessions --since %s lists %s, want none", today, out)
	}
	// The listing shows the durations, not 0ms.
	out, _, _ = runCLI(t, "", "sessions", "--db", db)
	for _, want := range []string{agentstream.FormatDurationMs(last.Sub(first).Milliseconds()), agentstream.FormatDurationMs(reported.Milliseconds())} {
		if !strings.Contains(out, " "+want+" ") {
			t.Errorf("sessions lacks the duration %s:\n%s", want, out)
		}
	}
}

// onTerminal starts the binary with args and a pseudo-terminal as its
// stdin and controlling terminal; its stdout and stderr are buffers.
func onTerminal(t *testing.T, args ...string) (cmd *exec.Cmd, term *os.File, stdout, stderr *syncBuffer) {
	t.Helper()
	term, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	t.Cleanup(func() { term.Close() })
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	cmd = exec.Command(binary, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, term, stdout, stderr
}

// waitExit waits for cmd and returns its exit code, failing the test if it
// is still running after a while.
func waitExit(t *testing.T, cmd *exec.Cmd, what string) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: still running after 15s", what)
		return -1
	}
}

// TestStdinOnTerminal: usage, render, normalize and import with no FILE,
// on a terminal, say they read stdin and how to end and stop it; Ctrl-C
// stops them (exit 130), and Ctrl-D ends the input.
func TestStdinOnTerminal(t *testing.T) {
	for _, args := range [][]string{{"usage"}, {"render"}, {"normalize"}, {"import", "--db", filepath.Join(t.TempDir(), "a.db"), "-"}} {
		t.Run(args[0], func(t *testing.T) {
			cmd, term, _, stderr := onTerminal(t, args...)
			poll(t, "the hint", 15*time.Second, func() bool { return strings.Contains(stderr.String(), "from stdin") })
			if hint := stderr.String(); !strings.Contains(hint, "Ctrl-D") || !strings.Contains(hint, "Ctrl-C") {
				t.Errorf("hint %q does not say how to end and stop", hint)
			}
			term.Write([]byte("\x03")) // Ctrl-C, as typed
			if code := waitExit(t, cmd, "after Ctrl-C"); code != exitAborted {
				t.Errorf("exit %d after Ctrl-C, want %d; stderr %q", code, exitAborted, stderr.String())
			}
		})
	}
	t.Run("Ctrl-D", func(t *testing.T) {
		cmd, term, stdout, stderr := onTerminal(t, "render", "--color", "never")
		poll(t, "the hint", 15*time.Second, func() bool { return strings.Contains(stderr.String(), "from stdin") })
		term.Write([]byte("a line typed by hand\n\x04"))
		if code := waitExit(t, cmd, "after Ctrl-D"); code != exitOK {
			t.Errorf("exit %d after Ctrl-D, want 0; stderr %q", code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "a line typed by hand") {
			t.Errorf("render printed %q, want the typed line", stdout.String())
		}
	})
	// Not a terminal: no hint.
	_, stderr, code := runCLI(t, "", "usage")
	if strings.Contains(stderr, "from stdin") || code != exitError {
		t.Errorf("usage on an empty pipe: exit %d, stderr %q", code, stderr)
	}
}

// TestCtxReader: a Read blocked on a pipe gives up when its context is
// cancelled, and loses nothing for the next Read; small reads get a big
// read's bytes in order.
func TestCtxReader(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := &ctxReader{ctx: ctx, r: r}
	time.AfterFunc(50*time.Millisecond, cancel)
	if n, err := c.Read(make([]byte, 10)); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Read on a cancelled context = %d, %v", n, err)
	}
	c.ctx = context.Background()
	want := strings.Repeat("0123456789", 100)
	go func() { io.WriteString(w, want); w.Close() }()
	var got []byte
	p := make([]byte, 7)
	for {
		n, err := c.Read(p)
		got = append(got, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != want {
		t.Errorf("read %q, want %q", got, want)
	}
}

// TestSessionIDPrefixes: every command that takes a SESSION takes a unique
// prefix of its id, with or without "s_", and gives what the whole id
// gives; a prefix of several ids, and an unknown one, are errors that say
// so.
func TestSessionIDPrefixes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	var ids []string
	for _, f := range []string{turnTools, basicQuery, sayHello} {
		out, errs, code := runCLI(t, "", "import", "--db", db, f)
		if code != exitOK {
			t.Fatalf("import %s: %s", f, errs)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	// The shortest prefix of ids[0] that no other id starts with.
	short := ""
	for n := len("s_") + 1; n <= len(ids[0]); n++ {
		p, unique := ids[0][:n], true
		for _, other := range ids[1:] {
			unique = unique && !strings.HasPrefix(other, p)
		}
		if unique {
			short = p
			break
		}
	}
	for _, args := range [][]string{
		{"show", "--json", "--db", db},
		{"show", "--color", "never", "--db", db},
		{"export", "--format", "native", "--db", db},
		{"export", "--format", "events", "--db", db},
		{"usage", "--json", "--db", db},
		{"renormalize", "--db", db},
	} {
		name := strings.Join(args[:len(args)-2], " ")
		t.Run(name, func(t *testing.T) {
			want, errs, code := runCLI(t, "", append(args, ids[0])...)
			if code != exitOK || want == "" {
				t.Fatalf("with the whole id: exit %d, stderr %q", code, errs)
			}
			for _, p := range []string{short, strings.TrimPrefix(short, "s_")} {
				got, errs, code := runCLI(t, "", append(args, p)...)
				if code != exitOK || got != want {
					t.Errorf("with the prefix %s: exit %d, stderr %q, output differs: %v", p, code, errs, got != want)
				}
			}
			_, errs, code = runCLI(t, "", append(args, "s_")...)
			if code != exitError || !strings.Contains(errs, "ambiguous") || !strings.Contains(errs, ids[0]) || !strings.Contains(errs, ids[1]) {
				t.Errorf("with the prefix s_: exit %d, stderr %q; want an error naming the ids", code, errs)
			}
			_, errs, code = runCLI(t, "", append(args, "s_nothing")...)
			if code != exitError || !strings.Contains(errs, "no session s_nothing in "+db) {
				t.Errorf("with an unknown id: exit %d, stderr %q", code, errs)
			}
		})
	}
}

// TestFlagsAfterTheFile: render and normalize take their flags after the
// FILE too, as the store commands do ("render FILE --color never" was "at
// most one FILE").
func TestFlagsAfterTheFile(t *testing.T) {
	for _, args := range [][]string{
		{"render", "--color", "never", "--width", "70"},
		{"normalize", "--live"},
	} {
		want, _, code := runCLI(t, "", append(args[:1:1], append(args[1:], basicQuery)...)...)
		got, errs, code2 := runCLI(t, "", append(args[:1:1], append([]string{basicQuery}, args[1:]...)...)...)
		if code != exitOK || code2 != exitOK || got != want {
			t.Errorf("%s FILE %v: exit %d, stderr %q, output differs from flags first: %v", args[0], args[1:], code2, errs, got != want)
		}
	}
}

// TestUsageMistypedFile: usage NAME with no such file and no such session
// says both, not only that there is no session.
func TestUsageMistypedFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "sesion.jsonl")
	_, stderr, code := runCLI(t, "", "usage", name)
	if code != exitError || !strings.Contains(stderr, "no file "+name) {
		t.Errorf("usage %s: exit %d, stderr %q", name, code, stderr)
	}
}
