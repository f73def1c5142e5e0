package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

const usageDoc = `Prints the usage recap of a recorded session: tokens (summed over model
calls, else the harness's own session total), cost, turns and duration as the
harness reported them, and the context used of the window. Figures nobody
reported are said to be missing, never printed as zero. The input may be
native lines (any protocol) or normalized event envelopes.

Over the store: "agentstream usage SESSION" gives the recap of a stored
session, and "agentstream usage --since T --by harness|model|day" totals the
stored sessions (T is a date, an RFC 3339 time or a duration such as 7d).`

func cmdUsage(ctx context.Context, e *env, args []string) int {
	if handled, code := usageFromStore(ctx, e, args); handled {
		return code
	}
	fs := newFlags(e, "usage", "[--protocol P] [--json] [FILE|-]", usageDoc)
	protocol := fs.String("protocol", "auto", "the dialect of the input, or events for envelopes: "+protocolList())
	asJSON := fs.Bool("json", false, "print the recap as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(e.stderr, "agentstream usage: at most one FILE")
		return exitUsage
	}
	name := "-"
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	var folder agentstream.UsageFolder
	err := withInput(e, name, func(r io.Reader) error {
		return foldInput(r, *protocol, func(env *agentstream.Envelope) { folder.Add(env.Payload) })
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream usage: %v\n", err)
		return exitError
	}
	recap := folder.Recap()
	if *asJSON {
		b, _ := json.MarshalIndent(recap, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	fmt.Fprintln(e.stdout, recap.String())
	if len(recap.Missing) > 0 {
		fmt.Fprintf(e.stdout, "not reported: %v\n", recap.Missing)
	}
	return exitOK
}

// foldInput calls fn with every stored envelope of the input, which is either
// envelopes (protocol "events", or auto-detected) or native lines.
func foldInput(r io.Reader, protocol string, fn func(*agentstream.Envelope)) error {
	br := bufio.NewReaderSize(r, 1<<20)
	if protocol == "auto" || protocol == "events" {
		head, _ := br.Peek(64 << 10)
		lines, _ := agentstream.SplitCompleteLines(head)
		if protocol == "events" || (len(lines) > 0 && isEnvelope(lines[0])) {
			lr := agentstream.NewLineReader(br)
			for {
				l, err := lr.Next()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				if len(jsonscan.TrimSpace(l.Bytes)) == 0 {
					continue
				}
				env, err := agentstream.ParseEnvelope(l.Bytes)
				if err != nil {
					return fmt.Errorf("line %d: %w", l.N, err)
				}
				fn(&env)
			}
		}
	}
	_, a, session, err := openStream(br, protocol, "")
	if err != nil {
		return err
	}
	_ = session
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	lr := agentstream.NewLineReader(br)
	var envs []agentstream.Envelope
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		envs = n.Line(envs[:0], l, zeroTime)
		for i := range envs {
			fn(&envs[i])
		}
	}
	for _, env := range n.End(nil, zeroTime) {
		fn(&env)
	}
	return nil
}

func isEnvelope(line []byte) bool {
	return len(jsonscan.Get(line, "v")) > 0 && len(jsonscan.Get(line, "payload")) > 0 && len(jsonscan.Get(line, "seq")) > 0
}
