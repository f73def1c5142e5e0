package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/store"
)

const importDoc = `Stores a recorded native output file (one harness's stdout, - for stdin) as a
session: its lines are kept byte for byte (but for the secrets they hold,
masked unless --no-redact) and normalized with today's adapters. The session's start is its first event's own time, else the
file's modification time. It prints the new session's id.

An empty or binary file is refused (exit 1): it is no session.`

func cmdImport(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "import", "[--protocol P|auto] [--id ID] [--harness H] FILE|-", importDoc)
	db := dbFlag(fs)
	protocol := fs.String("protocol", "auto", "the dialect of the file: auto or "+protocolList())
	id := fs.String("id", "", "the session id (default: a new one)")
	harness := fs.String("harness", "", "the harness (default: the protocol's)")
	rf := redactFlag(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream import: one FILE expected")
		return exitUsage
	}
	if err := checkProtocol(*protocol, "auto"); err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitUsage
	}
	if *id != "" && !store.ValidID(*id) {
		fmt.Fprintf(e.stderr, "agentstream import: bad --id %q\n", *id)
		return exitUsage
	}
	st, _, err := openStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	defer st.Close()
	red, err := rf.redactor(ctx, e, st)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	name := pos[0]
	mtime := time.Now()
	if name != "-" {
		if fi, err := os.Stat(name); err == nil {
			mtime = fi.ModTime()
		}
	}
	var sid string
	err = withInput(e, name, func(r io.Reader) error {
		var err error
		sid, err = importStream(ctx, st, r, importOptions{protocol: *protocol, id: *id, harness: *harness, mtime: mtime, redact: red})
		return err
	})
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	fmt.Fprintln(e.stdout, sid)
	return exitOK
}

type importOptions struct {
	protocol, id, harness string
	mtime                 time.Time
	// redact, when not nil, masks the secrets of every line first.
	redact *redact.Redactor
}

// importBuffer is how many lines import reads before it creates the
// session, looking for a first event that carries its own time.
const importBuffer = 256

// importStream stores the native lines of r as a new session and returns
// its id.
func importStream(ctx context.Context, st store.Store, r io.Reader, o importOptions) (string, error) {
	if o.redact != nil {
		r = o.redact.Reader(r)
	}
	br := bufio.NewReaderSize(r, adapter.DetectPeek)
	if err := checkText(br); err != nil {
		return "", err
	}
	protocol := o.protocol
	if protocol == "" || protocol == "auto" {
		protocol = adapter.DetectReader(br)
	}
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return "", err
	}
	harness := o.harness
	if harness == "" {
		harness = a.Harness
	}
	id := o.id
	if id == "" {
		id = store.NewID(o.mtime)
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: id, Harness: harness, ExplicitTurns: a.ExplicitTurns})
	var (
		w         store.Writer
		heldLines []store.Line
		heldEnvs  []agentstream.Envelope
		first     time.Time
		last      time.Time
		envs      []agentstream.Envelope
	)
	open := func() error {
		start := first
		if start.IsZero() {
			start = o.mtime
		}
		var err error
		w, err = st.Create(ctx, store.NewSession{ID: id, Protocol: a.Name, Harness: harness, StartedAt: start})
		if err != nil {
			return err
		}
		for _, l := range heldLines {
			if err := w.Line(ctx, l); err != nil {
				return err
			}
		}
		for _, env := range heldEnvs {
			if err := w.Handle(ctx, env); err != nil {
				return err
			}
		}
		heldLines, heldEnvs = nil, nil
		return nil
	}
	take := func(l store.Line) error {
		al := store.AgentLine(l)
		if l.Stream == store.Stdout {
			envs = n.Line(envs[:0], al, time.Time{})
		} else {
			envs = n.Stderr(envs[:0], al, time.Time{})
		}
		for _, env := range envs {
			if !env.TS.IsZero() {
				if first.IsZero() {
					first = env.TS
				}
				last = env.TS
			}
		}
		if w == nil {
			l.Data = append([]byte(nil), l.Data...)
			heldLines = append(heldLines, l)
			heldEnvs = append(heldEnvs, envs...)
			envs = nil
			if !first.IsZero() || len(heldLines) >= importBuffer {
				return open()
			}
			return nil
		}
		if err := w.Line(ctx, l); err != nil {
			return err
		}
		for _, env := range envs {
			if err := w.Handle(ctx, env); err != nil {
				return err
			}
		}
		return nil
	}
	sp := &store.LineSplitter{Stream: store.Stdout, Fn: take}
	if _, err := io.Copy(sp, br); err != nil {
		if w != nil {
			w.Close(ctx)
		}
		return "", err
	}
	if err := sp.Close(); err != nil {
		if w != nil {
			w.Close(ctx)
		}
		return "", err
	}
	if w == nil {
		if err := open(); err != nil {
			return "", err
		}
	}
	for _, env := range n.End(nil, time.Time{}) {
		if err := w.Handle(ctx, env); err != nil {
			w.Close(ctx)
			return "", err
		}
	}
	end := last
	if end.IsZero() {
		end = o.mtime
	}
	if err := closeAt(ctx, w, end); err != nil {
		return "", err
	}
	return id, nil
}
