package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/internal/jsonscan"
	"github.com/agentstream/agentstream/store"
)

const usageDoc = `Reports what sessions consumed, as the harnesses reported it.

  agentstream usage FILE|-        the recap of a recorded session: native lines
                                  of any protocol, or event envelopes
  agentstream usage SESSION       the recap of a stored session
  agentstream usage --by day|week|month|model|harness|project|session [--since T]
                                  the stored sessions' totals, one row per day
                                  (week from Monday, month), model, harness,
                                  project (working directory) or session, and
                                  a total row

--since T keeps the sessions started since T: a duration back from now (90m,
36h, 7d), an RFC 3339 time or a date. Days are the local time zone's (--utc
for UTC's).

Figures nobody reported show as "—" and are listed as not reported, never as
zero; one marked "≥" is a lower bound (a model call whose final count was
never printed, or a cost that some sessions did not report). Costs are the
harnesses' own, never computed from a price list: the "unpriced" column counts
the sessions (by model, the sessions' shares of the model) that spent tokens
without a cost. A session with several models (Claude's main model and the
small one it uses on the side) is split over them in --by model. A resumed
Codex thread's session counts only what it added to the thread's totals.

--json prints the recap, or the report as {"by", "rows", "total"}; --csv the
rows and the total as CSV, with a header.

SESSION is a session's id or, as git takes a commit's, a prefix of it that
no other id starts with (the "s_" may be left out).`

func cmdUsage(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "usage", "[--protocol P] [--json|--csv] [FILE|-|SESSION] | --by K [--since T] [--utc] [--db PATH] [--json|--csv]", usageDoc)
	protocol := fs.String("protocol", "auto", "the dialect of a FILE, or events for envelopes: "+protocolList())
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV (a report)")
	db := fs.String("db", "", dbHelp)
	since := fs.String("since", "", "keep the sessions started since T: a duration (7d), an RFC 3339 time or a date")
	by := fs.String("by", "", "group the stored sessions by day, week, month, model, harness, project or session")
	utc := fs.Bool("utc", false, "tell days, weeks and months in UTC instead of the local time zone")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *asJSON && *asCSV {
		fmt.Fprintln(e.stderr, "agentstream usage: --json or --csv, not both")
		return exitUsage
	}
	if len(pos) > 1 {
		fmt.Fprintln(e.stderr, "agentstream usage: at most one FILE or SESSION")
		return exitUsage
	}
	if set["by"] || set["since"] {
		if len(pos) > 0 {
			fmt.Fprintln(e.stderr, "agentstream usage: --by and --since report on the stored sessions, and take no FILE or SESSION")
			return exitUsage
		}
		if set["protocol"] {
			fmt.Fprintln(e.stderr, "agentstream usage: --protocol reads a FILE, not the store")
			return exitUsage
		}
		key := *by
		if key == "" {
			key = agentstream.ByDay
		}
		t, err := parseSince(*since, time.Now())
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream usage:", err)
			return exitUsage
		}
		loc := time.Local
		if *utc {
			loc = time.UTC
		}
		opt := agentstream.UsageReportOptions{By: key, Since: t, Location: loc}
		if _, err := agentstream.NewUsageReport(nil, opt); err != nil {
			fmt.Fprintf(e.stderr, "agentstream usage: bad --by %q: want %s\n", key, strings.Join(agentstream.UsageGroupings, ", "))
			return exitUsage
		}
		st, _, err := openExistingStore(ctx, e, *db)
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream usage:", err)
			return exitError
		}
		defer st.Close()
		rep, err := store.UsageReport(ctx, st, opt)
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream usage:", err)
			return exitError
		}
		switch {
		case *asJSON:
			writeJSON(e.stdout, rep)
		case *asCSV:
			err = writeUsageCSV(e.stdout, &rep)
		default:
			err = writeUsageTable(e.stdout, &rep)
		}
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream usage:", err)
			return exitError
		}
		return exitOK
	}
	if *asCSV {
		fmt.Fprintln(e.stderr, "agentstream usage: --csv prints a report: give --by")
		return exitUsage
	}
	if err := checkProtocol(*protocol, "auto", "events"); err != nil {
		fmt.Fprintln(e.stderr, "agentstream usage:", err)
		return exitUsage
	}
	name := "-"
	if len(pos) == 1 {
		name = pos[0]
	}
	if name != "-" && (set["db"] || !fileExists(name)) {
		if set["protocol"] {
			fmt.Fprintln(e.stderr, "agentstream usage: --protocol reads a FILE, not the store")
			return exitUsage
		}
		// Without --db, NAME may be a file's mistyped name as well as a
		// session's id: the errors say both.
		orFile := ""
		if !set["db"] {
			orFile = fmt.Sprintf("no file %s, and ", name)
		}
		st, where, err := openExistingStore(ctx, e, *db)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream usage: %s%v\n", orFile, err)
			return exitError
		}
		defer st.Close()
		id, err := sessionArg(ctx, st, where, name)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream usage: %s%v\n", orFile, err)
			return exitError
		}
		sess, err := st.Session(ctx, id)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream usage: session %s: %v\n", id, err)
			return exitError
		}
		printRecap(e.stdout, sess.Usage, *asJSON)
		return exitOK
	}
	var folder agentstream.UsageFolder
	err := readInput(ctx, e, "usage", name, func(r io.Reader) error {
		return foldInput(r, *protocol, func(env *agentstream.Envelope) { folder.AddEnvelope(env) })
	})
	if err != nil {
		return inputFailed(ctx, e, "usage", err)
	}
	printRecap(e.stdout, folder.Recap(), *asJSON)
	return exitOK
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(w, string(b))
}

// printRecap prints a recap on one line, then the models it was split
// over, its estimates and what nobody reported, in words.
func printRecap(w io.Writer, r agentstream.Recap, asJSON bool) {
	if asJSON {
		writeJSON(w, r)
		return
	}
	fmt.Fprintln(w, r.String())
	if len(r.Models) > 1 || len(r.Models) == 1 && len(r.Models[0].Names) > 0 && r.Models[0].Names[0] != r.Model {
		for _, m := range r.Models {
			line := "  " + m.Model
			if len(m.Names) > 0 && (len(m.Names) > 1 || m.Names[0] != m.Model) {
				line += " (" + strings.Join(m.Names, ", ") + ")"
			}
			line += ": in " + agentstream.FormatTokens(m.InputTokens) + ", out " + agentstream.FormatTokens(m.OutputTokens) +
				", cache read " + agentstream.FormatTokens(m.CacheReadTokens) + ", cache write " + agentstream.FormatTokens(m.CacheCreationTokens)
			if m.CostUSD != nil {
				line += ", cost " + agentstream.FormatCost(*m.CostUSD)
			}
			fmt.Fprintln(w, line)
		}
	}
	if len(r.Estimated) > 0 {
		fmt.Fprintf(w, "lower bounds (≥): %s\n", agentstream.FigureNames(r.Estimated))
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(w, "not reported: %s\n", agentstream.FigureNames(r.Missing))
	}
}

// groupTitles are the column titles of a report's key and label.
var groupTitles = map[string][2]string{
	agentstream.ByDay:     {"DAY", ""},
	agentstream.ByWeek:    {"WEEK OF", ""},
	agentstream.ByMonth:   {"MONTH", ""},
	agentstream.ByModel:   {"MODEL", "AS NAMED"},
	agentstream.ByHarness: {"HARNESS", ""},
	agentstream.ByProject: {"PROJECT", ""},
	agentstream.BySession: {"SESSION", "TITLE"},
}

func rowTokens(row *agentstream.UsageRow, key string, v *int64) string {
	s := agentstream.FormatTokens(v)
	if v != nil && row.IsEstimated(key) {
		s = "≥" + s
	}
	return s
}

func rowCost(row *agentstream.UsageRow) string {
	if row.CostUSD == nil {
		return "—"
	}
	s := agentstream.FormatCost(*row.CostUSD)
	if row.IsEstimated(agentstream.FigureCostUSD) {
		s = "≥" + s
	}
	return s
}

func writeUsageTable(w io.Writer, rep *agentstream.UsageReport) error {
	if len(rep.Rows) == 0 {
		_, err := fmt.Fprintln(w, "no sessions")
		return err
	}
	titles := groupTitles[rep.By]
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := titles[0] + "\tSESSIONS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tTOTAL TOKENS\tCOST\tUNPRICED\t"
	if titles[1] != "" {
		head += titles[1] + "\t"
	}
	fmt.Fprintln(tw, head)
	line := func(row *agentstream.UsageRow, key string) {
		total := agentstream.Thousands(row.TotalTokens())
		if row.InputTokens == nil && row.OutputTokens == nil && row.CacheReadTokens == nil && row.CacheCreationTokens == nil {
			total = "—"
		}
		l := fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t", key, row.Sessions,
			rowTokens(row, agentstream.FigureInputTokens, row.InputTokens), rowTokens(row, agentstream.FigureOutputTokens, row.OutputTokens),
			rowTokens(row, agentstream.FigureCacheReadTokens, row.CacheReadTokens), rowTokens(row, agentstream.FigureCacheCreationTokens, row.CacheCreationTokens),
			total, rowCost(row), row.Unpriced)
		if titles[1] != "" {
			l += clipLabel(row.Label) + "\t"
		}
		fmt.Fprintln(tw, l)
	}
	for i := range rep.Rows {
		line(&rep.Rows[i], rep.Rows[i].Key)
	}
	line(&rep.Total, "TOTAL")
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	if rep.Total.Unpriced > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d sessions spent tokens without reporting a cost", rep.Total.Unpriced, rep.Total.Sessions))
	}
	if rep.Total.IsEstimated(agentstream.FigureOutputTokens) {
		notes = append(notes, "output marked ≥ includes model calls whose final count was never printed")
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

func clipLabel(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// writeUsageCSV writes a report's rows and its total as CSV: a figure
// nobody reported is an empty cell.
func writeUsageCSV(w io.Writer, rep *agentstream.UsageReport) error {
	cw := csv.NewWriter(w)
	head := []string{rep.By, "sessions", "input tokens", "output tokens", "cache read tokens", "cache write tokens",
		"total tokens", "cost (USD)", "unpriced sessions", "estimated", "label"}
	if err := cw.Write(head); err != nil {
		return err
	}
	cell := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	rec := func(row *agentstream.UsageRow, key string) []string {
		cost := ""
		if row.CostUSD != nil {
			cost = strconv.FormatFloat(*row.CostUSD, 'f', -1, 64)
		}
		total := strconv.FormatInt(row.TotalTokens(), 10)
		if row.InputTokens == nil && row.OutputTokens == nil && row.CacheReadTokens == nil && row.CacheCreationTokens == nil {
			total = ""
		}
		return []string{key, strconv.Itoa(row.Sessions), cell(row.InputTokens), cell(row.OutputTokens), cell(row.CacheReadTokens),
			cell(row.CacheCreationTokens), total, cost, strconv.Itoa(row.Unpriced), agentstream.FigureNames(row.Estimated), row.Label}
	}
	for i := range rep.Rows {
		if err := cw.Write(rec(&rep.Rows[i], rep.Rows[i].Key)); err != nil {
			return err
		}
	}
	if err := cw.Write(rec(&rep.Total, "total")); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// foldInput calls fn with every stored envelope of the input, which is either
// envelopes (protocol "events", or auto-detected) or native lines.
func foldInput(r io.Reader, protocol string, fn func(*agentstream.Envelope)) error {
	br := bufio.NewReaderSize(r, 1<<20)
	if err := checkText(br); err != nil {
		return err
	}
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
	_, a, _, err := openStream(br, protocol, "")
	if err != nil {
		return err
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	lr := agentstream.NewLineReader(br)
	var envs []agentstream.Envelope
	var lines, understood int64
	var head [][]byte // the first lines, to tell which dialect they are
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(jsonscan.TrimSpace(l.Bytes)) > 0 {
			lines++
			if len(head) < adapter.DetectLines {
				head = append(head, append([]byte(nil), l.Bytes...))
			}
		}
		envs = n.Line(envs[:0], l, zeroTime)
		for i := range envs {
			if envs[i].Source != nil && envs[i].Type() != agentstream.TypeRaw {
				understood++
			}
			fn(&envs[i])
		}
	}
	for _, env := range n.End(nil, zeroTime) {
		fn(&env)
	}
	return misreadError(a.Name, lines, understood, head)
}

// misreadError returns an error when the input held lines but the
// protocol understood none of them (each became a raw event), naming the
// dialect they look like; nil when something was understood, or for the
// "none" protocol, whose lines are text by design.
func misreadError(protocol string, lines, understood int64, head [][]byte) error {
	if lines == 0 {
		return errEmptyInput
	}
	if protocol == "none" || understood > 0 {
		return nil
	}
	hint := "is it a harness's output?"
	if guess := adapter.Detect(head); guess != protocol && guess != "none" {
		hint = fmt.Sprintf("they look like %s: --protocol %s (or auto) reads them", guess, guess)
	}
	return fmt.Errorf("none of the %d lines was understood as %s (%s)", lines, protocol, hint)
}

func isEnvelope(line []byte) bool {
	return len(jsonscan.Get(line, "v")) > 0 && len(jsonscan.Get(line, "payload")) > 0 && len(jsonscan.Get(line, "seq")) > 0
}
