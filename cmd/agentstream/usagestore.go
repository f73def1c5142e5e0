package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

// usageFromStore answers `agentstream usage` over the store: the recap of
// one stored session (usage SESSION), or totals of the sessions started
// since a time grouped by harness, model or day (usage --since T --by K).
// It handles the call when args have --since, --by or --db, or name one
// argument that is neither "-" nor an existing file; otherwise it returns
// handled false and the caller reads a recorded file as before.
func usageFromStore(ctx context.Context, e *env, args []string) (handled bool, code int) {
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := fs.String("db", "", dbHelp)
	since := fs.String("since", "", "")
	by := fs.String("by", "", "")
	asJSON := fs.Bool("json", false, "")
	fs.String("protocol", "auto", "")
	if err := fs.Parse(args); err != nil {
		return false, 0
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	storeMode := set["since"] || set["by"] || set["db"]
	if !storeMode && fs.NArg() == 1 && fs.Arg(0) != "-" {
		if _, err := os.Stat(fs.Arg(0)); err != nil {
			storeMode = true
		}
	}
	if !storeMode {
		return false, 0
	}
	if set["protocol"] {
		fmt.Fprintln(e.stderr, "agentstream usage: --protocol reads a file, not the store")
		return true, exitUsage
	}
	st, _, err := openStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream usage:", err)
		return true, exitError
	}
	defer st.Close()
	if !set["since"] && !set["by"] {
		if fs.NArg() != 1 {
			fmt.Fprintln(e.stderr, "agentstream usage: one SESSION expected (or --since T --by harness|model|day)")
			return true, exitUsage
		}
		sess, err := st.Session(ctx, fs.Arg(0))
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream usage: session %s: %v\n", fs.Arg(0), err)
			return true, exitError
		}
		if *asJSON {
			b, _ := json.MarshalIndent(sess.Usage, "", "  ")
			fmt.Fprintln(e.stdout, string(b))
			return true, exitOK
		}
		fmt.Fprintln(e.stdout, sess.Usage.String())
		if len(sess.Usage.Missing) > 0 {
			fmt.Fprintf(e.stdout, "not reported: %v\n", sess.Usage.Missing)
		}
		return true, exitOK
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "agentstream usage: --since/--by take no SESSION")
		return true, exitUsage
	}
	key := *by
	if key == "" {
		key = "harness"
	}
	if key != "harness" && key != "model" && key != "day" {
		fmt.Fprintf(e.stderr, "agentstream usage: bad --by %q: want harness, model or day\n", key)
		return true, exitUsage
	}
	t, err := parseSince(*since, time.Now())
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream usage:", err)
		return true, exitUsage
	}
	groups, err := usageGroups(ctx, st, t, key)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream usage:", err)
		return true, exitError
	}
	if *asJSON {
		b, _ := json.MarshalIndent(groups, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return true, exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tSESSIONS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tCOST\tCOST UNREPORTED\t\n", strings.ToUpper(key))
	for _, g := range groups {
		c := "—"
		if g.CostUSD != nil {
			c = agentstream.FormatCost(*g.CostUSD)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t\n", g.Key, g.Sessions, agentstream.Thousands(g.InputTokens),
			agentstream.Thousands(g.OutputTokens), agentstream.Thousands(g.CacheReadTokens),
			agentstream.Thousands(g.CacheCreationTokens), c, g.CostMissing)
	}
	tw.Flush()
	return true, exitOK
}

// usageGroup is the usage of the sessions sharing one key. Token counts add
// what the sessions reported (an unreported count adds nothing); the cost is
// null when no session reported one, and CostMissing counts the sessions
// that did not, so a partial total is never mistaken for a whole one.
type usageGroup struct {
	Key                 string   `json:"key"`
	Sessions            int      `json:"sessions"`
	InputTokens         int64    `json:"inputTokens"`
	OutputTokens        int64    `json:"outputTokens"`
	CacheReadTokens     int64    `json:"cacheReadTokens"`
	CacheCreationTokens int64    `json:"cacheCreationTokens"`
	CostUSD             *float64 `json:"costUsd"`
	CostMissing         int      `json:"costMissing"`
}

func usageGroups(ctx context.Context, st store.Store, since time.Time, by string) ([]*usageGroup, error) {
	groups := map[string]*usageGroup{}
	q := store.SessionQuery{Since: since, Limit: 500}
	for {
		page, err := st.Sessions(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Sessions {
			var k string
			switch by {
			case "harness":
				k = s.Harness
			case "model":
				k = s.Model
				if k == "" {
					k = s.Usage.Model
				}
			case "day":
				k = s.StartedAt.UTC().Format("2006-01-02")
			}
			if k == "" {
				k = "(unknown)"
			}
			g := groups[k]
			if g == nil {
				g = &usageGroup{Key: k}
				groups[k] = g
			}
			u := s.Usage
			g.Sessions++
			for _, f := range []struct {
				dst *int64
				v   *int64
			}{{&g.InputTokens, u.InputTokens}, {&g.OutputTokens, u.OutputTokens},
				{&g.CacheReadTokens, u.CacheReadTokens}, {&g.CacheCreationTokens, u.CacheCreationTokens}} {
				if f.v != nil {
					*f.dst += *f.v
				}
			}
			if u.CostUSD != nil {
				if g.CostUSD == nil {
					g.CostUSD = new(float64)
				}
				*g.CostUSD += *u.CostUSD
			} else {
				g.CostMissing++
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	out := make([]*usageGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
