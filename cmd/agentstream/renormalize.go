package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/store"
)

const renormalizeDoc = `Reads a stored session's native lines again with today's adapter and prints
what would change: the count of each event type before and after, and the
events that differ. Events are matched by the native line they came from
(and their place among that line's events); events the platform wrote
itself (a user message, a title, the runner's session.ended) are kept in
their place. --replace stores the new events in place of the old ones; the
native lines stay. The output is deterministic.`

func cmdRenormalize(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "renormalize", "[--replace] [--protocol P] SESSION", renormalizeDoc)
	db := dbFlag(fs)
	replace := fs.Bool("replace", false, "store the new events in place of the old ones")
	protocol := fs.String("protocol", "", "read the lines as this protocol (default: the session's)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream renormalize: one SESSION expected")
		return exitUsage
	}
	st, _, err := openStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream renormalize:", err)
		return exitError
	}
	defer st.Close()
	id := pos[0]
	old, fresh, err := renormalize(ctx, st, id, *protocol)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream renormalize: %s: %v\n", id, err)
		return exitError
	}
	changed := printRenormalizeDiff(e.stdout, old, fresh)
	if *replace && changed {
		if err := st.ReplaceEvents(ctx, id, fresh); err != nil {
			fmt.Fprintf(e.stderr, "agentstream renormalize: %s: %v\n", id, err)
			return exitError
		}
		fmt.Fprintf(e.stdout, "replaced: %d events stored in place of %d\n", len(fresh), len(old))
	}
	return exitOK
}

// isPlatformEvent reports whether a stored event was written by the
// platform rather than read from a native line, so that re-normalizing
// keeps it: a user message the runner sent, a title it probed, a
// session.ended the runner wrote (any reason but completion).
func isPlatformEvent(e *agentstream.Envelope) bool {
	if e.Source != nil {
		return false
	}
	switch p := e.Payload.(type) {
	case *agentstream.Message:
		return p.Role == agentstream.RoleUser && !p.Partial
	case *agentstream.SessionTitle:
		// A title taken from the prompt is written again by the
		// Normalizer.
		return p.Source != agentstream.TitlePrompt
	case *agentstream.SessionEnded:
		return p.Reason != agentstream.ReasonCompletion
	}
	return false
}

type lineKey struct {
	stream string
	n      int64
}

// renormalize returns the stored events of a session and those today's
// adapter makes of its native lines.
func renormalize(ctx context.Context, st sessionStore, id, protocol string) (old, fresh []agentstream.Envelope, err error) {
	sess, err := st.Session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if sess.Running() {
		return nil, nil, fmt.Errorf("session is running")
	}
	if protocol == "" {
		protocol = sess.Protocol
	}
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return nil, nil, err
	}
	var last int64
	for {
		evs, err := st.Events(ctx, id, store.EventQuery{After: last, Limit: 5000})
		if err != nil {
			return nil, nil, err
		}
		for _, ev := range evs {
			env, err := ev.Envelope()
			if err != nil {
				return nil, nil, fmt.Errorf("seq %d: %w", ev.Seq, err)
			}
			old = append(old, env)
			last = ev.Seq
		}
		if len(evs) < 5000 {
			break
		}
	}
	// Where each platform event goes: after the events of the line the
	// last sourced event before it came from, or after the end of the
	// stream when no sourced event follows it.
	ts := map[lineKey]time.Time{}
	after := map[lineKey][]agentstream.Envelope{}
	var head, tail []agentstream.Envelope
	var anchor *lineKey
	lastSourced := -1
	for i := range old {
		if old[i].Source != nil {
			lastSourced = i
		}
	}
	for i := range old {
		env := &old[i]
		if env.Source != nil {
			k := lineKey{env.Source.Stream, env.Source.Line}
			if _, ok := ts[k]; !ok {
				ts[k] = env.TS
			}
			anchor = &k
			continue
		}
		if !isPlatformEvent(env) {
			continue
		}
		switch {
		case i > lastSourced:
			tail = append(tail, *env)
		case anchor == nil:
			head = append(head, *env)
		default:
			after[*anchor] = append(after[*anchor], *env)
		}
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: id, Harness: sess.Harness, ExplicitTurns: a.ExplicitTurns})
	var buf []agentstream.Envelope
	add := func(envs []agentstream.Envelope) {
		for _, env := range envs {
			buf = n.Add(buf, agentstream.Event{Payload: env.Payload, ParentCallID: env.ParentCallID, Replay: env.Origin == agentstream.OriginReplay}, env.TS)
		}
	}
	add(head)
	err = st.Lines(ctx, id, func(l store.Line) error {
		k := lineKey{l.Stream, l.N}
		t, ok := ts[k]
		if !ok {
			t = l.TS
		}
		if l.Stream == store.Stdout {
			buf = n.Line(buf, store.AgentLine(l), t)
		} else {
			buf = n.Stderr(buf, store.AgentLine(l), t)
		}
		add(after[k])
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var endTS time.Time
	if len(old) > 0 {
		endTS = old[len(old)-1].TS
	}
	buf = n.End(buf, endTS)
	add(tail)
	for _, env := range buf {
		if !agentstream.IsLive(env.Type()) {
			fresh = append(fresh, env)
		}
	}
	return old, fresh, nil
}

// eventKeys names each event by the line it came from and its place among
// that line's events ("stdout:57#0"), or by its place among the events with
// no line ("-#3").
func eventKeys(envs []agentstream.Envelope) []string {
	keys := make([]string, len(envs))
	count := map[string]int{}
	for i, env := range envs {
		k := "-"
		if env.Source != nil {
			k = env.Source.Stream + ":" + strconv.FormatInt(env.Source.Line, 10)
		}
		keys[i] = k + "#" + strconv.Itoa(count[k])
		count[k]++
	}
	return keys
}

// printRenormalizeDiff prints the per-type counts and the events that
// differ, and reports whether anything does.
func printRenormalizeDiff(w io.Writer, old, fresh []agentstream.Envelope) bool {
	oldCount, newCount := map[string]int{}, map[string]int{}
	for _, e := range old {
		oldCount[e.Type()]++
	}
	for _, e := range fresh {
		newCount[e.Type()]++
	}
	types := map[string]bool{}
	for t := range oldCount {
		types[t] = true
	}
	for t := range newCount {
		types[t] = true
	}
	var names []string
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "events: %d stored, %d now\n", len(old), len(fresh))
	for _, t := range names {
		mark := ""
		if oldCount[t] != newCount[t] {
			mark = fmt.Sprintf("  (%+d)", newCount[t]-oldCount[t])
		}
		fmt.Fprintf(w, "  %-20s %6d → %-6d%s\n", t, oldCount[t], newCount[t], mark)
	}
	body := func(e *agentstream.Envelope) string {
		return e.Type() + " " + string(e.Payload.AppendJSON(nil)) + " parent=" + e.ParentCallID + " origin=" + e.Origin
	}
	oldKeys, newKeys := eventKeys(old), eventKeys(fresh)
	oldBy := map[string]*agentstream.Envelope{}
	for i := range old {
		oldBy[oldKeys[i]] = &old[i]
	}
	newBy := map[string]*agentstream.Envelope{}
	for i := range fresh {
		newBy[newKeys[i]] = &fresh[i]
	}
	var changes []string
	for i := range fresh {
		k := newKeys[i]
		o, ok := oldBy[k]
		switch {
		case !ok:
			changes = append(changes, fmt.Sprintf("  + %-14s %s", k, clipLine(body(&fresh[i]))))
		case body(o) != body(&fresh[i]):
			changes = append(changes, fmt.Sprintf("  ~ %-14s %s\n      was %s", k, clipLine(body(&fresh[i])), clipLine(body(o))))
		}
	}
	for i := range old {
		if _, ok := newBy[oldKeys[i]]; !ok {
			changes = append(changes, fmt.Sprintf("  - %-14s %s", oldKeys[i], clipLine(body(&old[i]))))
		}
	}
	renumbered := false
	if len(changes) == 0 {
		for i := range old {
			if old[i].Seq != fresh[i].Seq || old[i].Turn != fresh[i].Turn {
				renumbered = true
				break
			}
		}
	}
	if len(changes) == 0 && !renumbered {
		fmt.Fprintln(w, "no change")
		return false
	}
	fmt.Fprintf(w, "changed events: %d\n", len(changes))
	const show = 50
	for i, c := range changes {
		if i == show {
			fmt.Fprintf(w, "  … and %d more\n", len(changes)-show)
			break
		}
		fmt.Fprintln(w, c)
	}
	if renumbered {
		fmt.Fprintln(w, "the same events, numbered differently (seq or turn)")
	}
	return true
}

func clipLine(s string) string { return oneLine(s, 160) }
