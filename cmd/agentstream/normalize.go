package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/redact"
)

const normalizeDoc = `Reads the native output of a harness (one JSON value per line) and writes
one event envelope per line on stdout. With no FILE, or with -, it reads stdin.
Each FILE is its own session.

With --stats it prints to stderr, after the events, how many events of each
type came out and, per native line type, how many lines became raw: the drift
signal when a vendor changes its output. --stats-json FILE writes the same as
JSON.

The secrets the lines hold are masked first, as run masks them (--no-redact
keeps them). By default it writes the events a store keeps; --live adds the live deltas
(message.delta, thinking.delta, tool.output). The output is deterministic:
the same input gives the same bytes, but for the tags of masked secrets,
which depend on the key: set AGENTSTREAM_REDACT_KEY (hex) for tags that
stay from one run to the next. ts is the line's own timestamp when it
has one, else null. The session id is --session, else "s_" followed by the
first 26 hex digits of the SHA-256 of the input's first 64 KiB.

The exit status is 0 whatever the lines contain, 2 for bad usage, 1 when
a file cannot be read or the output cannot be written, and 130 when
interrupted (Ctrl-C). Stdin on a terminal is announced on stderr: end it
with Ctrl-D.`

func cmdNormalize(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "normalize", "[--protocol P] [--session ID] [--live] [FILE|-]...", normalizeDoc)
	protocol := fs.String("protocol", "auto", "the dialect of the input: "+protocolList())
	session := fs.String("session", "", "the session id written in every envelope")
	live := fs.Bool("live", false, "also write the live deltas")
	stats := fs.Bool("stats", false, "print event and raw-line counts to stderr at the end")
	statsJSON := fs.String("stats-json", "", "write event and raw-line counts as JSON to `FILE`")
	rf := redactFlag(fs)
	files, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	red, err := rf.redactor(ctx, e, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream normalize: %v\n", err)
		return exitUsage
	}
	var st *normalizeStats
	if *stats || *statsJSON != "" {
		st = newNormalizeStats()
	}
	if err := checkProtocol(*protocol, "auto"); err != nil {
		fmt.Fprintln(e.stderr, "agentstream normalize:", err)
		return exitUsage
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	out := bufio.NewWriterSize(e.stdout, 256<<10)
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return inputFailed(ctx, e, "normalize", err)
		}
		opts := normalizeOptions{protocol: *protocol, session: *session, live: *live, stats: st, redact: red}
		var pr *progress
		if fi, err := os.Stat(name); err == nil && name != "-" && fi.Mode().IsRegular() {
			pr = newProgress(e, "normalize "+name, fi.Size())
		}
		err := readInput(ctx, e, "normalize", name, func(r io.Reader) error { return normalizeStream(pr.reader(r), out, opts) })
		pr.finish()
		if err != nil {
			out.Flush()
			return inputFailed(ctx, e, "normalize", err)
		}
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "agentstream normalize: %v\n", err)
		return exitError
	}
	if *stats {
		st.print(e.stderr)
	}
	if *statsJSON != "" {
		if err := st.writeJSON(*statsJSON); err != nil {
			fmt.Fprintf(e.stderr, "agentstream normalize: %v\n", err)
			return exitError
		}
	}
	return exitOK
}

// withInput opens name ("-" is stdin) and calls fn with it.
func withInput(e *env, name string, fn func(io.Reader) error) error {
	if name == "-" {
		return fn(e.stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fn(f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

type normalizeOptions struct {
	protocol string
	session  string
	live     bool
	stats    *normalizeStats
	redact   *redact.Redactor // when not nil, masks the secrets of every line first
}

// derivedSessionPeek is how much of the input the derived session id hashes.
const derivedSessionPeek = 64 << 10

// openStream peeks at the input to settle its protocol and session id.
func openStream(r io.Reader, protocol, session string) (*bufio.Reader, adapter.Adapter, string, error) {
	br := bufio.NewReaderSize(r, adapter.DetectPeek)
	if protocol == "" || protocol == "auto" {
		protocol = adapter.DetectReader(br)
	}
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return nil, adapter.Adapter{}, "", err
	}
	if session == "" {
		head, _ := br.Peek(derivedSessionPeek)
		sum := sha256.Sum256(head)
		session = "s_" + hex.EncodeToString(sum[:])[:26]
	}
	return br, a, session, nil
}

func normalizeStream(r io.Reader, w *bufio.Writer, opts normalizeOptions) error {
	br, a, session, err := openStream(r, opts.protocol, opts.session)
	if err != nil {
		return err
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{
		Session: session, Harness: a.Harness, ExplicitTurns: a.ExplicitTurns,
	})
	var in io.Reader = br
	if opts.redact != nil {
		in = opts.redact.Reader(br)
	}
	lr := agentstream.NewLineReader(in)
	var envs []agentstream.Envelope
	var buf []byte
	write := func() error {
		for i := range envs {
			if !opts.live && agentstream.IsLive(envs[i].Type()) {
				continue
			}
			buf = envs[i].AppendJSON(buf[:0])
			buf = append(buf, '\n')
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		envs = n.Line(envs[:0], l, zeroTime)
		if opts.stats != nil {
			opts.stats.line(a, l, envs)
		}
		if err := write(); err != nil {
			return err
		}
	}
	envs = n.End(envs[:0], zeroTime)
	if opts.stats != nil {
		opts.stats.line(a, agentstream.Line{}, envs)
	}
	return write()
}
