package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"

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
native lines stay. The output is deterministic.

SESSION is a session's id or, as git takes a commit's, a prefix of it that
no other id starts with (the "s_" may be left out).`

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
	if *protocol != "" {
		if err := checkProtocol(*protocol); err != nil {
			fmt.Fprintln(e.stderr, "agentstream renormalize:", err)
			return exitUsage
		}
	}
	st, where, err := openExistingStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream renormalize:", err)
		return exitError
	}
	defer st.Close()
	id, err := sessionArg(ctx, st, where, pos[0])
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream renormalize:", err)
		return exitError
	}
	pr := newProgress(e, "renormalize "+id, 0)
	old, fresh, err := renormalize(ctx, progressStore{st, pr}, id, *protocol)
	pr.finish()
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

// renormalize returns the stored events of a session and those today's
// adapter makes of its native lines.
func renormalize(ctx context.Context, st sessionStore, id, protocol string) (old, fresh []agentstream.Envelope, err error) {
	if protocol == "" {
		sess, err := st.Session(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		protocol = sess.Protocol
	}
	d, ok := dialect(protocol)
	if !ok {
		_, err := adapter.Lookup(protocol)
		return nil, nil, err
	}
	return store.Renormalize(ctx, st, id, d)
}

// dialect returns the store.Dialect of a protocol, for the stores to read
// sessions again.
func dialect(protocol string) (store.Dialect, bool) {
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return store.Dialect{}, false
	}
	return store.Dialect{New: a.New, ExplicitTurns: a.ExplicitTurns}, true
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

// progressStore counts into a progress the native lines a store reads.
type progressStore struct {
	sessionStore
	p *progress
}

func (s progressStore) Lines(ctx context.Context, id string, fn func(store.Line) error) error {
	return s.sessionStore.Lines(ctx, id, func(l store.Line) error {
		s.p.addLine(len(l.Data))
		return fn(l)
	})
}
