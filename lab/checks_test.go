package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/modelsim"
)

// A checker checks one run against what the simulator sent. Every
// expected value comes from the scenario or the simulator's records of
// what it answered, never from the run's output.
type checker struct {
	lc  *labCase
	out *runOutput
}

// categories are the tool categories of the roles.
var categories = map[string]string{
	modelsim.RoleShell: "execute", modelsim.RoleEdit: "edit", modelsim.RoleWrite: "edit",
	modelsim.RoleRead: "read", modelsim.RolePlan: "plan", modelsim.RoleSubagent: "delegate",
}

// replies returns the records of the calls the simulator answered with a
// reply (not an error), in order; thread "" means both.
func (c *checker) replies(thread string) []modelsim.Record {
	var out []modelsim.Record
	for _, r := range c.out.records {
		if r.Kind == modelsim.KindCall && r.Reply.Error == nil && (thread == "" || r.Thread == thread) {
			out = append(out, r)
		}
	}
	return out
}

// expectFailure says whether the scenario ends in an error: its last main
// call is one.
func (c *checker) expectFailure() *modelsim.APIError {
	calls := c.lc.s.Calls
	return calls[len(calls)-1].Error
}

func (c *checker) of(typ string) []envelope {
	var out []envelope
	for _, e := range c.out.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// all runs every check of the run.
func (c *checker) all() []result {
	var rs []result
	add := func(check string, r result) {
		r.Check = check
		rs = append(rs, r)
	}
	if r, ok := c.unanswered(); ok {
		add("scenario", r)
		if r.Status == na {
			return rs
		}
	}
	if r := subagentHidden(c.lc.h.Name); r != "" && c.lc.s.Subagent != nil {
		add("subagent", notApplicablef("%s", r))
	}
	add("exit", c.exit())
	add("session.ended", c.ended())
	add("tool.call", c.toolCalls())
	add("tool.result", c.toolResults())
	add("plan", c.plan())
	add("message", c.message())
	add("usage.call", c.callUsage())
	add("usage.session", c.sessionUsage())
	add("recap", c.recap())
	add("retry", c.retries())
	add("turns", c.turns())
	add("raw", c.raw())
	add("files", c.files())
	var kept []result
	for _, r := range rs {
		if r.Status == fail {
			if l := limit(c.lc.h.Name, c.lc.s.Name, r.Check); l != "" {
				r = result{Check: r.Check, Status: na, Detail: l + " (" + r.Detail + ")"}
			}
		}
		if r.Status != "" {
			kept = append(kept, r)
		}
	}
	return kept
}

func ok() result                      { return result{Status: pass} }
func failf(f string, a ...any) result { return result{Status: fail, Detail: fmt.Sprintf(f, a...)} }
func notApplicablef(f string, a ...any) result {
	return result{Status: na, Detail: fmt.Sprintf(f, a...)}
}

// unanswered looks at the requests the simulator refused: a role no
// offered tool fills makes the scenario not applicable to the harness;
// any other refusal is a failure.
func (c *checker) unanswered() (result, bool) {
	for _, r := range c.out.records {
		if r.Kind != modelsim.KindRefused {
			continue
		}
		if strings.Contains(r.Reason, "no offered tool fills it") {
			return notApplicablef("%s offers no such tool: %s", c.lc.h.Title, r.Reason), true
		}
		return failf("the simulator refused request %d (%s %s): %s", r.Seq, r.Method, r.Path, r.Reason), true
	}
	if len(c.replies("")) == 0 && c.expectFailure() == nil {
		return failf("the harness made no model call the scenario answered:\n%s", clip(c.out.console, 2000)), true
	}
	return result{}, false
}

func (c *checker) exit() result {
	want := c.expectFailure() != nil
	if got := c.out.exit != 0; got != want {
		return failf("run exited %d; want %s", c.out.exit, map[bool]string{true: "non-zero: the session failed", false: "0"}[want])
	}
	return ok()
}

func (c *checker) ended() result {
	ends := c.of(agentstream.TypeSessionEnded)
	if len(ends) == 0 {
		return failf("no session.ended")
	}
	last := ends[len(ends)-1]
	// Only news that is no work may come after the end: the harness's
	// stderr (an agent stopped once it reported its end can still write
	// there), a title, usage, a settings update, the session's states
	// (closing, closed).
	for i := len(c.out.events) - 1; i >= 0 && c.out.events[i].Type != agentstream.TypeSessionEnded; i-- {
		switch t := c.out.events[i].Type; t {
		case agentstream.TypeStderr, agentstream.TypeSessionTitle, agentstream.TypeUsage, agentstream.TypeSessionUpdated,
			agentstream.TypeSessionState:
		default:
			return failf("session.ended is not the last event (%s follows it)", t)
		}
	}
	status := str(last.Payload, "status")
	if e := c.expectFailure(); e != nil {
		if status != agentstream.StatusFailed {
			return failf("session.ended status %q, want failed", status)
		}
		if msg := str(last.Payload, "error"); !strings.Contains(msg, e.Message) {
			// The message must be in the events wherever the harness
			// printed it on stdout.
			if !bytes.Contains(c.out.spool, []byte(e.Message)) {
				return notApplicablef("the harness's stdout does not carry the API's message %q (session.ended error %q)", e.Message, msg)
			}
			for _, ev := range c.out.events {
				var texts []string
				leaves(ev.Payload, &texts)
				for _, s := range texts {
					if ev.Type != agentstream.TypeRaw && strings.Contains(s, e.Message) {
						return ok()
					}
				}
			}
			return failf("session.ended error %q lacks the API's message %q, which the harness printed", msg, e.Message)
		}
		return ok()
	}
	if status != agentstream.StatusSucceeded {
		return failf("session.ended status %q (error %q), want succeeded", status, str(last.Payload, "error"))
	}
	return ok()
}

// strings of a JSON value, at every depth.
func leaves(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case map[string]any:
		for _, x := range v {
			leaves(x, out)
		}
	case []any:
		for _, x := range v {
			leaves(x, out)
		}
	}
}

// covers reports whether every string the simulator sent in a tool's
// arguments appears in the input the harness printed (harnesses may add
// arguments, or print a command wrapped in a shell).
func covers(sent json.RawMessage, printed string) (string, bool) {
	var s, p any
	json.Unmarshal(sent, &s)
	json.Unmarshal([]byte(printed), &p)
	var want, have []string
	leaves(s, &want)
	leaves(p, &have)
	for _, w := range want {
		if w == "" {
			continue
		}
		found := false
		for _, h := range have {
			if strings.Contains(h, w) {
				found = true
				break
			}
		}
		if !found {
			return w, false
		}
	}
	return "", true
}

// sentTools lists the tool calls the simulator sent that the harness
// prints.
func (c *checker) sentTools() []modelsim.SentTool {
	var out []modelsim.SentTool
	for _, r := range c.replies(c.printedThreads()) {
		out = append(out, r.Reply.Tools...)
	}
	return out
}

// printedThreads is the thread whose calls the harness prints: "" for all,
// ThreadMain when it prints nothing of a subagent's.
func (c *checker) printedThreads() string {
	if subagentHidden(c.lc.h.Name) != "" {
		return modelsim.ThreadMain
	}
	return ""
}

// callFor finds the tool.call that carries a sent tool call: by name and
// input, the first not taken yet.
func (c *checker) callFor(st modelsim.SentTool, taken map[int]bool) (envelope, int, string) {
	name := printedName(c.lc.h.Name, st)
	var near string
	for i, e := range c.out.events {
		if e.Type != agentstream.TypeToolCall || taken[i] {
			continue
		}
		if got := str(e.Payload, "name"); got != name {
			near = fmt.Sprintf("a tool.call named %q", got)
			continue
		}
		if missing, ok := covers(st.Input, str(e.Payload, "input")); !ok && inputHidden(c.lc.h.Name) == "" {
			near = fmt.Sprintf("tool.call %s with input %s, which lacks %q", name, str(e.Payload, "input"), missing)
			continue
		}
		return e, i, ""
	}
	if near == "" {
		near = "no tool.call at all"
	}
	return envelope{}, -1, near
}

func (c *checker) toolCalls() result {
	sent := c.sentTools()
	if len(sent) == 0 {
		return result{}
	}
	taken := map[int]bool{}
	for _, st := range sent {
		if st.Role == modelsim.RolePlan && c.lc.h.Protocol == "acp" {
			continue // an ACP agent shows a plan as a plan update (the plan check)
		}
		e, i, near := c.callFor(st, taken)
		if i < 0 {
			return failf("the model called %s (%s) with %s; found %s", st.Name, st.Role, st.Input, near)
		}
		taken[i] = true
		want := categories[st.Role]
		if pn := printedName(c.lc.h.Name, st); st.Role == modelsim.RoleSubagent && (pn == "think" || pn == "other") {
			want = pn // the ACP kind is all the agent says of it
		}
		if want != "" && str(e.Payload, "category") != want {
			return failf("tool.call %s has category %q, want %q", st.Name, str(e.Payload, "category"), want)
		}
	}
	return ok()
}

func (c *checker) toolResults() result {
	sent := c.sentTools()
	if len(sent) == 0 {
		return result{}
	}
	taken := map[int]bool{}
	for _, st := range sent {
		if st.Role == modelsim.RolePlan && c.lc.h.Protocol == "acp" {
			continue
		}
		call, i, _ := c.callFor(st, taken)
		if i < 0 {
			return failf("no tool.call for %s, so no result to check", st.Name)
		}
		taken[i] = true
		id := str(call.Payload, "callId")
		var res *envelope
		for j := i + 1; j < len(c.out.events); j++ {
			e := c.out.events[j]
			if e.Type == agentstream.TypeToolResult && str(e.Payload, "callId") == id {
				res = &c.out.events[j]
				break
			}
		}
		if res == nil {
			return failf("no tool.result for %s (callId %s)", st.Name, id)
		}
		x := st.Expect
		out := str(res.Payload, "output")
		if outputHidden(c.lc.h.Name) != "" {
			x.Output, x.OutputAny = "", nil
		}
		if x.Output != "" && !strings.Contains(out, x.Output) {
			return failf("tool.result of %s: output %q lacks %q", st.Name, clip(out, 300), x.Output)
		}
		if len(x.OutputAny) > 0 {
			found := false
			for _, o := range x.OutputAny {
				found = found || strings.Contains(out, o)
			}
			if !found {
				return failf("tool.result of %s: output %q holds none of %q", st.Name, clip(out, 300), x.OutputAny)
			}
		}
		if isErr, _ := res.Payload["isError"].(bool); isErr != x.IsError && !(x.IsError && noExitCode(c.lc.h.Name) != "") {
			return failf("tool.result of %s: isError %v, want %v (output %q)", st.Name, isErr, x.IsError, clip(out, 300))
		}
		if x.ExitCode != 0 {
			code, ok := res.Payload["exitCode"].(float64)
			if !ok {
				if r := noExitCode(c.lc.h.Name); r != "" {
					continue
				}
				return failf("tool.result of %s: exitCode null, want %d", st.Name, x.ExitCode)
			}
			if int(code) != x.ExitCode {
				return failf("tool.result of %s: exitCode %v, want %d", st.Name, code, x.ExitCode)
			}
		}
	}
	return ok()
}

// plan checks that a plan the model set is a plan event with its steps.
func (c *checker) plan() result {
	var steps []modelsim.PlanStep
	for _, st := range c.lc.s.Calls {
		for _, u := range st.Tools {
			if u.Role == modelsim.RolePlan {
				steps = u.Steps
			}
		}
	}
	sent := false
	for _, st := range c.sentTools() {
		sent = sent || st.Role == modelsim.RolePlan
	}
	if len(steps) == 0 || !sent {
		return result{}
	}
	plans := c.of(agentstream.TypePlan)
	if len(plans) == 0 {
		return failf("no plan event; the model set a plan of %d steps", len(steps))
	}
	got, _ := plans[len(plans)-1].Payload["steps"].([]any)
	var texts, want []string
	for _, g := range got {
		m, _ := g.(map[string]any)
		texts = append(texts, str(m, "text"))
	}
	for _, st := range steps {
		want = append(want, st.Text)
	}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		return failf("the last plan's steps are %q, want %q", texts, want)
	}
	return ok()
}

// message checks that the last assistant message is the text of the last
// reply of the main conversation.
func (c *checker) message() result {
	var want string
	for _, r := range c.replies(modelsim.ThreadMain) {
		if r.Reply.Text != "" {
			want = r.Reply.Text
		}
	}
	if want == "" {
		return result{}
	}
	var got string
	found := false
	for _, e := range c.out.events {
		if e.Type == agentstream.TypeMessage && str(e.Payload, "role") == agentstream.RoleAssistant && e.ParentCallID == "" {
			got, found = str(e.Payload, "text"), true
		}
	}
	if !found {
		return failf("no assistant message; want %q", want)
	}
	if strings.TrimSpace(got) != want {
		return failf("last assistant message %q, want %q", got, want)
	}
	return ok()
}

// usage is a usage payload's token counts.
type usage struct{ in, out, cacheRead, cacheCreation int64 }

func (u usage) String() string {
	return fmt.Sprintf("in %d out %d cache read %d cache write %d", u.in, u.out, u.cacheRead, u.cacheCreation)
}

func num(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

func usageOf(p map[string]any) usage {
	return usage{num(p, "inputTokens"), num(p, "outputTokens"), num(p, "cacheReadTokens"), num(p, "cacheCreationTokens")}
}

func fromSim(u modelsim.Usage) usage { return usage{u.Input, u.Output, u.CacheRead, u.CacheCreation} }

// sent returns the usage of each reply the simulator sent, as the harness's
// API can tell it.
func (c *checker) sent(thread string) []usage {
	var out []usage
	for _, r := range c.replies(thread) {
		u := r.Reply.Usage.Visible(r.API)
		out = append(out, visible(c.lc.h.Name, fromSim(u), u.Reasoning))
	}
	return out
}

func sum(us []usage) usage {
	var s usage
	for _, u := range us {
		s.in += u.in
		s.out += u.out
		s.cacheRead += u.cacheRead
		s.cacheCreation += u.cacheCreation
	}
	return s
}

func (c *checker) usages(scope string) []usage {
	var out []usage
	for _, e := range c.of(agentstream.TypeUsage) {
		p := e.Payload
		if p["inputTokens"] == nil && p["outputTokens"] == nil && p["cacheReadTokens"] == nil && p["cacheCreationTokens"] == nil {
			continue // no token figure: the harness reported other things
		}
		if str(p, "scope") == scope {
			out = append(out, usageOf(e.Payload))
		}
	}
	return out
}

// callUsage checks the call usage events: one per reply, each with the
// reply's figures.
func (c *checker) callUsage() result {
	want := c.sent(c.printedThreads())
	got := c.usages(agentstream.ScopeCall)
	if len(want) == 0 {
		if len(got) > 0 {
			return failf("%d call usage events, but no reply was sent", len(got))
		}
		return result{}
	}
	if r := usageReport(c.lc.h.Name, agentstream.ScopeCall); r != "" {
		if len(got) == 0 {
			return notApplicablef("%s", r)
		}
	}
	estimates := c.estimates()
	sortUsage(want)
	sortUsage(got)
	if len(got) != len(want) {
		return failf("call usage %v, want %v (one per reply the simulator sent)", got, want)
	}
	// A call whose final count the harness never printed is marked as an
	// estimate: its input and cache figures are the call's, its output at
	// most what was sent. Every other call is exact.
	for i := range want {
		g, w := got[i], want[i]
		if estimates[g] && g.in == w.in && g.cacheRead == w.cacheRead && g.cacheCreation == w.cacheCreation && g.out <= w.out {
			continue
		}
		if g != w {
			return failf("call usage %v, want %v (one per reply the simulator sent; estimates %v)", got, want, estimates)
		}
	}
	return ok()
}

// estimates returns the call usage figures marked as estimates.
func (c *checker) estimates() map[usage]bool {
	out := map[usage]bool{}
	for _, e := range c.of(agentstream.TypeUsage) {
		if str(e.Payload, "scope") == agentstream.ScopeCall && e.Payload["estimate"] == true {
			out[usageOf(e.Payload)] = true
		}
	}
	return out
}

// sortUsage orders figures by input and cache, so that an estimate, whose
// output is lower, stays beside the call it stands for.
func sortUsage(us []usage) {
	sort.Slice(us, func(i, j int) bool {
		a, b := us[i], us[j]
		if a.in != b.in {
			return a.in < b.in
		}
		if a.cacheRead != b.cacheRead {
			return a.cacheRead < b.cacheRead
		}
		if a.cacheCreation != b.cacheCreation {
			return a.cacheCreation < b.cacheCreation
		}
		return a.out < b.out
	})
}

// sessionUsage checks the harness's own total, the latest session usage:
// the sum of what was sent.
func (c *checker) sessionUsage() result {
	got := c.usages(agentstream.ScopeSession)
	if len(got) == 0 {
		if len(c.replies("")) == 0 {
			return result{}
		}
		if r := usageReport(c.lc.h.Name, agentstream.ScopeSession); r != "" {
			return notApplicablef("%s", r)
		}
		return failf("no session usage")
	}
	want := sum(c.sent(sessionThreads(c.lc.h.Name)))
	if last := got[len(got)-1]; last != want {
		return failf("latest session usage %v, want %v (the sum of what the simulator sent)", last, want)
	}
	return ok()
}

// recap checks run's recap against the sum of what was sent, and against
// the harness's own total when it printed one.
func (c *checker) recap() result {
	rc := c.out.summary.Recap
	if r := usageReport(c.lc.h.Name, agentstream.ScopeSession); r != "" && usageReport(c.lc.h.Name, agentstream.ScopeCall) != "" {
		return notApplicablef("%s", r)
	}
	if len(c.replies("")) == 0 || rc.TokensFrom == "" {
		if len(c.replies("")) > 0 && usageReport(c.lc.h.Name, agentstream.ScopeSession) == "" {
			return failf("the recap has no tokens")
		}
		return result{}
	}
	v := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	got := usage{v(rc.InputTokens), v(rc.OutputTokens), v(rc.CacheReadTokens), v(rc.CacheCreationTokens)}
	want := sum(c.sent(c.printedThreads()))
	if rc.TokensFrom == "session" {
		want = sum(c.sent(sessionThreads(c.lc.h.Name)))
	}
	if got != want {
		return failf("recap (from %s) %v, want %v", rc.TokensFrom, got, want)
	}
	if s := c.usages(agentstream.ScopeSession); len(s) > 0 && rc.TokensFrom == "calls" && sessionThreads(c.lc.h.Name) == "" && s[len(s)-1] != got {
		return failf("recap %v disagrees with the harness's own total %v", got, s[len(s)-1])
	}
	return ok()
}

// retries checks that each retry the harness made after an error answer is
// a retry event, for the harnesses that print their retries.
func (c *checker) retries() result {
	errs, status := 0, 0
	for _, r := range c.out.records {
		// Only a rate limit or an overload is meant to be retried.
		if r.Kind == modelsim.KindCall && r.Reply.Error != nil && (r.Reply.Error.Status == 429 || r.Reply.Error.Status >= 500) {
			errs++
			status = r.Reply.Error.Status
		}
	}
	if errs == 0 {
		return result{}
	}
	retried := errs
	if c.expectFailure() != nil {
		retried-- // the last error was given up on, not retried
	}
	if retried == 0 {
		return result{}
	}
	if r := silentRetries(c.lc.h.Name, status); r != "" {
		return notApplicablef("%s", r)
	}
	got := len(c.of(agentstream.TypeRetry))
	if got != retried {
		return failf("%d retry events; the harness retried %d times after the simulator's errors", got, retried)
	}
	return ok()
}

// turns checks turn numbers: each reply of the main conversation without a
// tool call ends a turn, so the last assistant message is in the turn of
// that count, and no event is in a later turn.
func (c *checker) turns() result {
	want := 0
	for _, r := range c.replies(modelsim.ThreadMain) {
		if len(r.Reply.Tools) == 0 {
			want++
		}
	}
	maxTurn := 0
	for _, e := range c.out.events {
		maxTurn = max(maxTurn, e.Turn)
	}
	if want == 0 {
		// No reply: the first turn (turn 0 where the dialect marks its
		// turns and the harness failed before marking one).
		if maxTurn == 1 || (maxTurn == 0 && explicitTurns(c.lc.h.Protocol)) {
			return ok()
		}
		want = 1
	}
	if maxTurn != want {
		return failf("events reach turn %d; want %d (the replies without a tool call end a turn each)", maxTurn, want)
	}
	return ok()
}

// lineTypes returns the native stdout lines of the run with their types.
func (c *checker) lines() ([][]byte, []string) {
	lines := bytes.Split(c.out.spool, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	types := make([]string, len(lines))
	for i, l := range lines {
		types[i] = adapter.NativeType(agentstream.Line{Bytes: l})
	}
	return lines, types
}

// rawLines returns, by native line number, whether each stdout line gave
// raw events only.
func (c *checker) rawLines() map[int]bool {
	raw := map[int]bool{}
	other := map[int]bool{}
	for _, e := range c.out.events {
		if e.Source == nil || e.Source.Stream != "stdout" {
			continue
		}
		if e.Type == agentstream.TypeRaw {
			raw[e.Source.Line] = true
		} else {
			other[e.Source.Line] = true
		}
	}
	for l := range other {
		delete(raw, l)
	}
	return raw
}

func (c *checker) rawCounts() (lines, rawLines int, rawTypes, lineTypes []string) {
	ls, types := c.lines()
	deliberate := c.deliberate()
	raw := c.rawLines()
	seenRaw, seen := map[string]bool{}, map[string]bool{}
	for i := range ls {
		if len(bytes.TrimSpace(ls[i])) == 0 {
			continue
		}
		lines++
		seen[types[i]] = true
		if raw[i+1] {
			rawLines++
			if deliberate[types[i]] == "" {
				seenRaw[types[i]] = true
			}
		}
	}
	for t := range seenRaw {
		rawTypes = append(rawTypes, t)
	}
	for t := range seen {
		lineTypes = append(lineTypes, t)
	}
	sort.Strings(rawTypes)
	sort.Strings(lineTypes)
	return
}

func (c *checker) deliberate() map[string]string {
	a, err := adapter.Lookup(c.lc.h.Protocol)
	if err != nil {
		return nil
	}
	return a.Deliberate
}

// raw checks that no native line type falls to raw unless its adapter
// lists it as deliberately raw.
func (c *checker) raw() result {
	_, _, all, _ := c.rawCounts()
	pending := pendingRaw[c.lc.h.Protocol]
	if c.lc.h.Protocol == "claude-stream" {
		pending = pendingRaw["claude-json"]
	}
	var rawTypes, known []string
	for _, t := range all {
		if pending[t] != "" {
			known = append(known, t)
		} else {
			rawTypes = append(rawTypes, t)
		}
	}
	if len(rawTypes) == 0 && len(known) > 0 {
		return result{Status: "known", Detail: pending[known[0]] + " (" + strings.Join(known, ", ") + ")"}
	}
	if len(rawTypes) > 0 {
		ls, types := c.lines()
		var ex []string
		for _, rt := range rawTypes {
			for i := range ls {
				if types[i] == rt && c.rawLines()[i+1] {
					ex = append(ex, clip(string(ls[i]), 300))
					break
				}
			}
		}
		return failf("native line types %s became raw without being listed as deliberately raw; e.g. %s", strings.Join(rawTypes, ", "), strings.Join(ex, " | "))
	}
	return ok()
}

// files checks the files the scenario says the working directory holds.
func (c *checker) files() result {
	if len(c.lc.s.Files) == 0 {
		return result{}
	}
	for name, want := range c.lc.s.Files {
		got, err := os.ReadFile(filepath.Join(c.out.base, "work", name))
		if err != nil {
			return failf("%v", err)
		}
		if string(got) != want {
			return failf("%s holds %q, want %q", name, got, want)
		}
	}
	return ok()
}

// sameAsAuto checks that --protocol auto gives the same events as the
// explicit protocol: the same types in the same order, with the same tool
// names, inputs and message texts (ids and times differ between runs).
func (c *checker) sameAsAuto(auto *runOutput) result {
	shape := func(evs []envelope) []string {
		var out, started []string
		for _, e := range evs {
			s := e.Type
			switch e.Type {
			case agentstream.TypeMessage:
				if str(e.Payload, "role") == agentstream.RoleUser {
					continue // run records the prompt it sends; auto sends it on stdin too
				}
				s += " " + str(e.Payload, "role") + " " + str(e.Payload, "text")
			case agentstream.TypeToolCall:
				s += " " + str(e.Payload, "name")
			case agentstream.TypeMessageAccepted, agentstream.TypeMessageStarted, agentstream.TypeMessageCompleted,
				agentstream.TypeSessionState:
				// The lifecycle of a message run sent, and the states it
				// went through: a prompt that auto leaves on the command
				// line was never sent by run.
				continue
			case agentstream.TypeSessionStarted, agentstream.TypeSessionUpdated:
				// Session metadata the harness prints as it starts: in the
				// turn run opened for the message it sent, or before the
				// harness's own first turn when it sent none.
				started = append(started, s)
				continue
			case agentstream.TypeRaw, agentstream.TypeStderr, agentstream.TypeSessionTitle,
				agentstream.TypeUsage, agentstream.TypeRetry, agentstream.TypeToolOutput:
				// Notices a harness prints a varying number of times
				// (Copilot's background task changes, its output
				// chunks): not part of what must agree.
				continue
			}
			out = append(out, fmt.Sprintf("%d %s", e.Turn, s))
		}
		return append(started, out...)
	}
	want, got := shape(c.out.events), shape(auto.events)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		return result{Check: "auto", Status: fail, Detail: fmt.Sprintf("--protocol auto gave other events:\nexplicit:\n%s\nauto:\n%s",
			clip(strings.Join(want, "\n"), 3000), clip(strings.Join(got, "\n"), 3000))}
	}
	return result{Check: "auto", Status: pass}
}
