package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/store"
)

const localDoc = `With --local, import finds the session files the harnesses keep under
$HOME and imports them, each file a session:

  claude-code  $CLAUDE_CONFIG_DIR (a comma-separated list), else ~/.claude
               and ~/.config/claude: projects/*/*.jsonl, with the subagents'
               transcripts beside them (protocol claude-json; the cost is
               the one a transcript's cost-state line reports)
  copilot-cli  $COPILOT_HOME or ~/.copilot: session-state/*/events.jsonl
               (protocol copilot-json; its usage records are not read yet)
  codex        $CODEX_HOME (a comma-separated list) or ~/.codex:
               sessions/YYYY/MM/DD/rollout-*.jsonl (protocol codex-rollout)
  gemini-cli   ~/.gemini/tmp/*/chats/*.jsonl, and the older builds' one
               JSON document a chat, *.json (protocol gemini-chat)
  opencode     $XDG_DATA_HOME/opencode or ~/.local/share/opencode: every
               session of opencode.db (opened read-only), and the older
               builds' storage/session/*/*.json with their messages' and
               parts' files (a session the database holds is read from
               it alone); each session read as its records, one a line
               (protocol opencode-storage)
  qwen-code    ~/.qwen/projects/*/chats/*.jsonl (protocol qwen-chat)
  droid        ~/.factory/sessions/*/*.jsonl, each read with the settings
               file beside it (<session>.settings.json, its token totals)
               as one last line (protocol droid-session)

A file's session id comes from its harness and absolute path, and the
session keeps the file's path and the SHA-256 of what was read of it as the
labels import.path and import.sha256; a session of opencode's database
takes its id from the database's path and opencode's session id, kept as
the label import.key, and its SHA-256 is that of its records (a droid
session's, of its lines and settings). A file imported before is skipped when
its content is unchanged, and read again when it changed (a transcript that
grew): its session is replaced by one of the same id. Only complete lines
are read: a file being written is read up to its last newline (a .json
chat, rewritten whole, to its end).

It prints a line for each file it stores (the session id, the harness,
"imported" or "updated", and the path, with "#" and the session's key
after a database's) and a count on stderr; on a
terminal, its progress on stderr. A file it cannot read or import is named
on stderr, and the exit status is then 1.

--since skips files last modified before a time (2026-11-29, 36h, 7d);
--harness takes one harness's files. --watch keeps looking, every
--interval, for new and grown files until Ctrl-C (exit 0), and tries a file
that failed again only once it changed.`

// A localSource is where one harness keeps its session files.
type localSource struct {
	harness, protocol string
	// find returns the harness's session files, given how to read the
	// environment and $HOME.
	find func(getenv func(string) string, home string) []string
	// whole, when set, tells the files that are one document, written
	// whole each time (Gemini CLI's older .json chats): they are read to
	// their end, newline or not.
	whole func(path string) bool
	// records, when set, reads the sessions a file found holds (opencode's
	// database, many; one of its older session files, with the files of
	// its messages and parts), each as the lines its protocol reads, in
	// place of the file's own bytes.
	records func(ctx context.Context, path string) ([]localRecord, error)
}

// A localRecord is one session a file holds, as its protocol's lines.
type localRecord struct {
	// key names the session within the file (opencode's session id);
	// empty for a file that is one session.
	key  string
	body []byte
	mod  time.Time
}

// localSources returns the places --local looks, in order.
func localSources() []localSource {
	dir := func(getenv func(string) string, env, home, def string) []string {
		if v := getenv(env); v != "" {
			var out []string
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					out = append(out, d)
				}
			}
			return out
		}
		return []string{filepath.Join(home, def)}
	}
	walk := func(roots []string, keep func(rel string) bool) []string {
		var out []string
		for _, root := range roots {
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				if rel, err := filepath.Rel(root, p); err == nil && keep(filepath.ToSlash(rel)) {
					out = append(out, p)
				}
				return nil
			})
		}
		return out
	}
	match := func(pattern string) func(string) bool {
		return func(rel string) bool { ok, _ := filepath.Match(pattern, rel); return ok }
	}
	anyOf := func(fns ...func(string) bool) func(string) bool {
		return func(rel string) bool {
			for _, f := range fns {
				if f(rel) {
					return true
				}
			}
			return false
		}
	}
	return []localSource{
		{harness: "claude-code", protocol: "claude-json", find: func(getenv func(string) string, home string) []string {
			dirs := dir(getenv, "CLAUDE_CONFIG_DIR", home, ".claude")
			if getenv("CLAUDE_CONFIG_DIR") == "" {
				config := getenv("XDG_CONFIG_HOME")
				if config == "" {
					config = filepath.Join(home, ".config")
				}
				dirs = append(dirs, filepath.Join(config, "claude"))
			}
			var roots []string
			for _, d := range dirs {
				roots = append(roots, filepath.Join(d, "projects"))
			}
			return walk(roots, anyOf(match("*/*.jsonl"), match("*/*/subagents/*.jsonl")))
		}},
		{harness: "copilot-cli", protocol: "copilot-json", find: func(getenv func(string) string, home string) []string {
			var roots []string
			for _, d := range dir(getenv, "COPILOT_HOME", home, ".copilot") {
				roots = append(roots, filepath.Join(d, "session-state"))
			}
			return walk(roots, match("*/events.jsonl"))
		}},
		{harness: "codex", protocol: "codex-rollout", find: func(getenv func(string) string, home string) []string {
			var roots []string
			for _, d := range dir(getenv, "CODEX_HOME", home, ".codex") {
				roots = append(roots, filepath.Join(d, "sessions"))
			}
			return walk(roots, match("*/*/*/rollout-*.jsonl"))
		}},
		{harness: "gemini-cli", protocol: "gemini-chat", find: func(getenv func(string) string, home string) []string {
			return walk([]string{filepath.Join(home, ".gemini", "tmp")}, anyOf(match("*/chats/*.json"), match("*/chats/*.jsonl")))
		}, whole: func(p string) bool { return strings.HasSuffix(p, ".json") }},
		{harness: "qwen-code", protocol: "qwen-chat", find: func(getenv func(string) string, home string) []string {
			return walk([]string{filepath.Join(home, ".qwen", "projects")}, match("*/chats/*.jsonl"))
		}},
		{harness: "droid", protocol: "droid-session", find: func(getenv func(string) string, home string) []string {
			return walk([]string{filepath.Join(home, ".factory", "sessions")}, match("*/*.jsonl"))
		}, records: droidRecords},
		{harness: "opencode", protocol: "opencode-storage", find: func(getenv func(string) string, home string) []string {
			data := getenv("XDG_DATA_HOME")
			if data == "" {
				data = filepath.Join(home, ".local", "share")
			}
			return walk([]string{filepath.Join(data, "opencode")}, anyOf(match("opencode.db"), match("storage/session/*/*.json")))
		}, records: opencodeRecords},
	}
}

// localOptions are the flags of import --local.
type localOptions struct {
	harness  string
	since    time.Time
	watch    bool
	interval time.Duration
	redact   *redact.Redactor
}

// localFile is one session file found, and what to do with it.
type localFile struct {
	src  localSource
	path string
	id   string
	sum  string // the hex SHA-256 of the file's first size bytes (or of body)
	size int64  // up to the last newline
	mod  time.Time
	// key and body are the session's, when the file holds sessions
	// read as records (see localSource.records).
	key  string
	body []byte
	// replace is true when a session of the file's id holds other content.
	replace bool
}

// localID is the session id of a harness's file: a content id of the
// harness and the file's absolute path, so that the file keeps its session
// however it grows.
func localID(harness, path string) string {
	return contentID(sha256.Sum256([]byte("agentstream import --local\x00" + harness + "\x00" + path)))
}

func importLocal(ctx context.Context, e *env, st sessionStore, o localOptions) int {
	home := e.getenv("HOME")
	if home == "" {
		fmt.Fprintln(e.stderr, "agentstream import: --local: $HOME is not set")
		return exitError
	}
	var srcs []localSource
	for _, s := range localSources() {
		if o.harness == "" || o.harness == s.harness {
			srcs = append(srcs, s)
		}
	}
	if len(srcs) == 0 {
		var names []string
		for _, s := range localSources() {
			names = append(names, s.harness)
		}
		fmt.Fprintf(e.stderr, "agentstream import: --local: unknown --harness %q (one of %s)\n", o.harness, strings.Join(names, ", "))
		return exitUsage
	}
	sc := &localScan{failed: map[string]string{}}
	for {
		code := scanLocal(ctx, e, st, srcs, home, o, sc)
		if o.watch && (code == exitAborted || ctx.Err() != nil) {
			// Ctrl-C is how a watch ends.
			fmt.Fprintln(e.stderr, "agentstream import: --watch: stopped")
			return exitOK
		}
		if !o.watch || code != exitOK {
			return code
		}
		select {
		case <-ctx.Done():
		case <-time.After(o.interval):
		}
	}
}

// localScan is what one look of --watch remembers for the next.
type localScan struct {
	// failed holds the SHA-256 of each file whose import failed, so
	// that it is tried again only once it changed.
	failed map[string]string
}

// scanLocal finds the files of srcs and imports the new and changed ones.
func scanLocal(ctx context.Context, e *env, st sessionStore, srcs []localSource, home string, o localOptions, sc *localScan) int {
	var todo []localFile
	var total int64
	same, failed := 0, 0
	for _, src := range srcs {
		paths := src.find(e.getenv, home)
		sort.Strings(paths)
		for _, p := range paths {
			if ctx.Err() != nil {
				return exitAborted
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				abs = p
			}
			var fs []*localFile
			if src.records != nil {
				fs, err = localLookRecords(ctx, st, src, abs, o.since)
			} else {
				var f *localFile
				f, err = localLook(ctx, st, src, abs, o.since)
				fs = append(fs, f)
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "agentstream import: %s: %v\n", abs, err)
				failed++
				continue
			}
			for _, f := range fs {
				switch {
				case f == nil:
					same++
				case sc.failed[f.name()] == f.sum:
					// Failed before, unchanged since: said already.
				default:
					todo = append(todo, *f)
					total += f.size
				}
			}
		}
	}
	pr := newProgress(e, "import --local", total)
	imported := 0
	for i, f := range todo {
		pr.setWhat(fmt.Sprintf("import --local %d/%d", i+1, len(todo)))
		if err := importLocalFile(ctx, st, f, o, pr); err != nil {
			if ctx.Err() != nil {
				pr.finish()
				fmt.Fprintf(e.stderr, "agentstream import: --local: interrupted after %d of %d files\n", imported, len(todo))
				return exitAborted
			}
			fmt.Fprintf(e.stderr, "agentstream import: %s: %v\n", f.name(), err)
			sc.failed[f.name()] = f.sum
			failed++
			continue
		}
		imported++
		verb := "imported"
		if f.replace {
			verb = "updated"
		}
		fmt.Fprintf(e.stdout, "%s\t%s\t%s\t%s\n", f.id, f.src.harness, verb, f.name())
	}
	if len(todo) > 0 {
		pr.finish()
	}
	if !o.watch || imported > 0 || failed > 0 {
		fmt.Fprintf(e.stderr, "agentstream import: --local: %d imported or updated, %d unchanged, %d failed\n", imported, same, failed)
	}
	if failed > 0 && !o.watch {
		return exitError
	}
	return exitOK
}

// localLook returns what to do with the file at path: nil when its session
// holds its content already or it is older than since.
func localLook(ctx context.Context, st sessionStore, src localSource, path string, since time.Time) (*localFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !since.IsZero() && fi.ModTime().Before(since) {
		return nil, nil
	}
	size := fi.Size()
	if src.whole == nil || !src.whole(path) {
		if size, err = completeLines(fh, size); err != nil {
			return nil, err
		}
	}
	if size == 0 {
		return nil, nil // nothing complete yet
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(fh, 0, size)); err != nil {
		return nil, err
	}
	f := &localFile{src: src, path: path, id: localID(src.harness, path), sum: hex.EncodeToString(h.Sum(nil)), size: size, mod: fi.ModTime()}
	return localKnown(ctx, st, f)
}

// name is how the file's session is named: its path, and the session's
// key within the file after a '#'.
func (f *localFile) name() string {
	if f.key == "" {
		return f.path
	}
	return f.path + "#" + f.key
}

// localLookRecords returns what to do with each session the file at path
// holds, read as records: nil for one whose session holds its records
// already or that changed last before since.
func localLookRecords(ctx context.Context, st sessionStore, src localSource, path string, since time.Time) ([]*localFile, error) {
	recs, err := src.records(ctx, path)
	if err != nil {
		return nil, err
	}
	var out []*localFile
	for _, r := range recs {
		if len(r.body) == 0 || !since.IsZero() && r.mod.Before(since) {
			continue
		}
		sum := sha256.Sum256(r.body)
		f := &localFile{src: src, path: path, key: r.key, body: r.body, sum: hex.EncodeToString(sum[:]), size: int64(len(r.body)), mod: r.mod}
		f.id = localID(src.harness, f.name())
		if f, err = localKnown(ctx, st, f); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// localKnown returns f, marked to replace its session when one of its id
// holds other content, or nil when its session holds its content already.
func localKnown(ctx context.Context, st sessionStore, f *localFile) (*localFile, error) {
	sess, err := st.Session(ctx, f.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return f, nil
	case err != nil:
		return nil, err
	case sess.Labels["import.sha256"] == f.sum:
		return nil, nil
	}
	f.replace = true
	return f, nil
}

// completeLines returns how many of the first size bytes of f end with its
// last newline.
func completeLines(f io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == '\n' {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// importLocalFile stores (or stores again) one file's session.
func importLocalFile(ctx context.Context, st sessionStore, f localFile, o localOptions, pr *progress) error {
	var r io.ReadSeeker
	if f.body != nil {
		r = bytes.NewReader(f.body)
	} else {
		fh, err := os.Open(f.path)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = io.NewSectionReader(fh, 0, f.size)
	}
	if f.replace {
		if err := st.DeleteSession(ctx, f.id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	opts := importOptions{
		protocol: f.src.protocol, id: f.id, harness: f.src.harness, mtime: f.mod, redact: o.redact,
		labels:   map[string]string{"import.path": f.path, "import.sha256": f.sum},
		progress: pr,
	}
	if f.key != "" {
		opts.labels["import.key"] = f.key
	}
	if _, _, err := importSeekable(ctx, st, r, opts); err != nil {
		// A session cut short is no reading of the file: the next scan
		// reads it again.
		st.DeleteSession(context.WithoutCancel(ctx), f.id)
		return err
	}
	return nil
}

// cmdImportLocal checks the flags of import --local and runs it.
func cmdImportLocal(ctx context.Context, e *env, db string, pos []string, protocol, id, harness, since string, watch bool, interval time.Duration, rf redactFlags) int {
	switch {
	case len(pos) > 0:
		fmt.Fprintln(e.stderr, "agentstream import: --local takes no FILE")
		return exitUsage
	case id != "" || protocol != "auto":
		fmt.Fprintln(e.stderr, "agentstream import: --local takes neither --id nor --protocol")
		return exitUsage
	case interval <= 0:
		fmt.Fprintln(e.stderr, "agentstream import: --interval must be positive")
		return exitUsage
	}
	o := localOptions{harness: harness, watch: watch, interval: interval}
	if since != "" {
		t, err := parseSince(since, time.Now())
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream import: --since:", err)
			return exitUsage
		}
		o.since = t
	}
	st, _, err := openStore(ctx, e, db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	defer st.Close()
	if o.redact, err = rf.redactor(ctx, e, st); err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	return importLocal(ctx, e, st, o)
}
