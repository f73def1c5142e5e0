package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

const sessionsDoc = `Lists the stored sessions, newest first. --json prints a JSON array of
session records (the shape GET /api/sessions serves).`

func cmdSessions(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "sessions", "[--json] [--harness H] [--status S] [--since T] [--limit N]", sessionsDoc)
	db := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	harness := fs.String("harness", "", "only sessions of this harness")
	status := fs.String("status", "", "only sessions with this status: running, succeeded, failed, cancelled, interrupted")
	since := fs.String("since", "", "only sessions started since: a duration (90m, 36h, 7d), an RFC 3339 time or a date")
	limit := fs.Int("limit", 20, "at most this many sessions (0 for all)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream sessions: no arguments expected")
		return exitUsage
	}
	if *status != "" && !store.ValidStatus(*status) {
		fmt.Fprintf(e.stderr, "agentstream sessions: bad --status %q\n", *status)
		return exitUsage
	}
	t, err := parseSince(*since, time.Now())
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream sessions:", err)
		return exitUsage
	}
	st, _, err := openExistingStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream sessions:", err)
		return exitError
	}
	defer st.Close()
	q := store.SessionQuery{Harness: *harness, Status: *status, Since: t, Limit: 200}
	list := []store.Session{}
	for {
		page, err := st.Sessions(ctx, q)
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream sessions:", err)
			return exitError
		}
		list = append(list, page.Sessions...)
		if page.Next == "" || (*limit > 0 && len(list) >= *limit) {
			break
		}
		q.Cursor = page.Next
	}
	if *limit > 0 && len(list) > *limit {
		list = list[:*limit]
	}
	if *asJSON {
		b, _ := json.MarshalIndent(list, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tHARNESS\tSTARTED\tDURATION\tEVENTS\tTOKENS\tCOST\tTITLE")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, s.Status, dash(s.Harness),
			s.StartedAt.Local().Format("2006-01-02 15:04"), sessionDuration(s), s.LastSeq,
			tokens(s.Usage), cost(s.Usage), oneLine(s.Title, 60))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintln(e.stderr, "agentstream sessions:", err)
		return exitError
	}
	return exitOK
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func sessionDuration(s store.Session) string {
	if s.EndedAt.IsZero() || s.EndedAt.Equal(s.StartedAt) {
		// Running, or no time known but one (an import of lines without
		// times, whose harness reported no duration).
		return "—"
	}
	return agentstream.FormatDurationMs(s.EndedAt.Sub(s.StartedAt).Milliseconds())
}

func tokens(r agentstream.Recap) string {
	if r.TokensFrom == "" {
		return "—"
	}
	return agentstream.Thousands(r.TotalTokens())
}

func cost(r agentstream.Recap) string {
	if r.CostUSD == nil {
		return "—"
	}
	return agentstream.FormatCost(*r.CostUSD)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
