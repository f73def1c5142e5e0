package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/console"
	"github.com/agentstream/agentstream/store"
)

const showDoc = `Renders a stored session with the console renderer, as 'agentstream run'
showed it. --follow keeps following a running session (written by another
process) until it ends. --json prints the stored envelopes instead, one per
line.

SESSION is a session's id or, as git takes a commit's, a prefix of it that
no other id starts with (the "s_" may be left out).`

// showPoll is how often --follow looks for new events.
const showPoll = 200 * time.Millisecond

func cmdShow(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "show", "[--follow] [--json] [--width N] [--color auto|always|never] SESSION", showDoc)
	db := dbFlag(fs)
	follow := fs.Bool("follow", false, "follow a running session until it ends")
	asJSON := fs.Bool("json", false, "print the envelopes, one per line")
	width := fs.Int("width", 0, "the width in columns (0: the terminal's, else $COLUMNS, else 80)")
	color := fs.String("color", "auto", "colour: auto, always or never")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream show: one SESSION expected")
		return exitUsage
	}
	st, where, err := openExistingStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream show:", err)
		return exitError
	}
	defer st.Close()
	id, err := sessionArg(ctx, st, where, pos[0])
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream show:", err)
		return exitError
	}
	var h agentstream.Handler
	var closeFn func() error
	out := bufio.NewWriter(e.stdout)
	if *asJSON {
		h = agentstream.HandlerFunc(func(_ context.Context, env agentstream.Envelope) error {
			_, err := out.Write(append(env.AppendJSON(nil), '\n'))
			return err
		})
		closeFn = out.Flush
	} else {
		opts, err := consoleOptions(e, *color, "none", *width)
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream show:", err)
			return exitUsage
		}
		r := console.New(e.stdout, opts)
		h, closeFn = r, r.Close
	}
	err = replaySession(ctx, st, id, *follow, h, out)
	if cerr := closeFn(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(e.stderr, "agentstream show:", err)
		return exitError
	}
	return exitOK
}

// replaySession hands every stored event of a session to h, in order; with
// follow, it then polls for new ones until the session is no longer
// running.
func replaySession(ctx context.Context, st store.Store, id string, follow bool, h agentstream.Handler, out *bufio.Writer) error {
	var last int64
	for {
		// Read the status before the events: once it says the session
		// stopped, the events read after it are all there is.
		sess, err := st.Session(ctx, id)
		if err != nil {
			return err
		}
		for {
			evs, err := st.Events(ctx, id, store.EventQuery{After: last, Limit: 1000})
			if err != nil {
				return err
			}
			for _, ev := range evs {
				env, err := ev.Envelope()
				if err != nil {
					return fmt.Errorf("seq %d: %w", ev.Seq, err)
				}
				if err := h.Handle(ctx, env); err != nil {
					return err
				}
				last = ev.Seq
			}
			if len(evs) < 1000 {
				break
			}
		}
		if err := out.Flush(); err != nil {
			return err
		}
		if !follow || !sess.Running() {
			return nil
		}
		t := time.NewTimer(showPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
