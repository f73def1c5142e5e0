package main

import (
	"bufio"
	"context"
	"fmt"

	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/redact/gitleaks"
	"github.com/agentstream/agentstream/store"
)

const exportDoc = `Writes a stored session on stdout: --format events writes its normalized
envelopes, one per line; --format native writes the native lines of one
stream (--stream, stdout by default) byte for byte, each followed by "\n".
A native line longer than the soft limit was kept only in part: its head is
written, and a warning on stderr gives its size and SHA-256.

Before writing anything, export runs a deep secret scan (gitleaks' rules)
over what it would write, and refuses, with exit status 3 and the place of
each finding on stderr, a session in which it finds a secret that the
masking at ingestion let through (or that was stored with --no-redact).
--allow-secrets writes it anyway.

SESSION is a session's id or, as git takes a commit's, a prefix of it that
no other id starts with (the "s_" may be left out).`

func cmdExport(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "export", "--format events|native [--stream stdout|stderr] SESSION", exportDoc)
	db := dbFlag(fs)
	format := fs.String("format", "events", "events or native")
	stream := fs.String("stream", store.Stdout, "with --format native: stdout or stderr")
	allow := fs.Bool("allow-secrets", false, "write the session even when the deep scan finds secrets in it")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream export: one SESSION expected")
		return exitUsage
	}
	if *format != "events" && *format != "native" {
		fmt.Fprintf(e.stderr, "agentstream export: bad --format %q: want events or native\n", *format)
		return exitUsage
	}
	if *stream != store.Stdout && *stream != store.Stderr {
		fmt.Fprintf(e.stderr, "agentstream export: bad --stream %q: want stdout or stderr\n", *stream)
		return exitUsage
	}
	st, where, err := openExistingStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream export:", err)
		return exitError
	}
	defer st.Close()
	id, err := sessionArg(ctx, st, where, pos[0])
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream export:", err)
		return exitError
	}
	if !*allow {
		sc, err := gitleaks.New()
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream export: the deep secret scan: %v\n", err)
			return exitError
		}
		found, err := scanExport(ctx, st, id, *format, *stream, sc)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream export: %s: %v\n", id, err)
			return exitError
		}
		if len(found) > 0 {
			fmt.Fprintf(e.stderr, "agentstream export: %s: the deep scan found %d unmasked secret(s); nothing written (--allow-secrets writes it anyway):\n", id, len(found))
			for i, f := range found {
				if i == 20 {
					fmt.Fprintf(e.stderr, "  … and %d more\n", len(found)-i)
					break
				}
				fmt.Fprintln(e.stderr, " ", f)
			}
			return exitSecret
		}
	}
	out := bufio.NewWriterSize(e.stdout, 256<<10)
	if *format == "events" {
		err = exportEvents(ctx, st, id, out)
	} else {
		err = st.Lines(ctx, id, func(l store.Line) error {
			if l.Stream != *stream {
				return nil
			}
			if l.Truncated() {
				fmt.Fprintf(e.stderr, "agentstream export: %s line %d was kept in part: %d of %d bytes, sha256 %x\n",
					l.Stream, l.N, len(l.Data), l.Size, l.SHA256)
			}
			out.Write(l.Data)
			return out.WriteByte('\n')
		})
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream export: %s: %v\n", id, err)
		return exitError
	}
	return exitOK
}

// scanExport runs the deep scan over what export would write, and returns
// where each secret it finds is (and by which rule), never the secret.
func scanExport(ctx context.Context, st sessionStore, id, format, stream string, sc redact.Scanner) ([]string, error) {
	var found []string
	if format == "events" {
		var last int64
		for {
			evs, err := st.Events(ctx, id, store.EventQuery{After: last, Limit: 5000})
			if err != nil {
				return nil, err
			}
			for _, ev := range evs {
				for _, f := range sc.Scan(ev.Data) {
					found = append(found, fmt.Sprintf("event %d (%s), bytes %d-%d: %s", ev.Seq, ev.Type, f.Start, f.End, f.Rule))
				}
				last = ev.Seq
			}
			if len(evs) < 5000 {
				return found, nil
			}
		}
	}
	err := st.Lines(ctx, id, func(l store.Line) error {
		if l.Stream != stream {
			return nil
		}
		for _, f := range sc.Scan(l.Data) {
			found = append(found, fmt.Sprintf("%s line %d, bytes %d-%d: %s", l.Stream, l.N, f.Start, f.End, f.Rule))
		}
		return nil
	})
	return found, err
}

type eventSource interface {
	Events(ctx context.Context, id string, q store.EventQuery) ([]store.Event, error)
}

func exportEvents(ctx context.Context, st eventSource, id string, out *bufio.Writer) error {
	var last int64
	for {
		evs, err := st.Events(ctx, id, store.EventQuery{After: last, Limit: 5000})
		if err != nil {
			return err
		}
		for _, ev := range evs {
			out.Write(ev.Data)
			if err := out.WriteByte('\n'); err != nil {
				return err
			}
			last = ev.Seq
		}
		if len(evs) < 5000 {
			return nil
		}
	}
}
