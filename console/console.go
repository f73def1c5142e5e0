package console

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
)

// CIGitHub is the Options.CI value for GitHub Actions.
const CIGitHub = "github"

// DefaultWidth is the width used when Options.Width is zero.
const DefaultWidth = 80

// Options configure a Renderer. The zero value renders plain text, 80
// columns wide, for no CI.
type Options struct {
	// Color turns on ANSI colours and styles. Decide it with UseColor.
	Color bool
	// Width is the width of the output in columns; zero means
	// DefaultWidth.
	Width int
	// CI is CIGitHub to write GitHub Actions workflow commands, or "".
	CI string
	// Quiet renders nothing but errors: error events, and the end of a
	// session that did not succeed.
	Quiet bool
	// Now times tool calls and the session when envelopes carry no
	// timestamp; nil means such durations are not shown.
	Now func() time.Time
	// StepSummary, when set, receives a Markdown recap of the session on
	// Close: status, reason, duration, tokens, cost and tool counts (for
	// GitHub's $GITHUB_STEP_SUMMARY).
	StepSummary io.Writer
}

// Blocks of the output: a run of streamed text, a run of streamed
// thinking, or a tool call's line waiting for its result.
const (
	blockNone = iota
	blockText
	blockThinking
	blockTool
)

// Bounds on what the renderer remembers, so that memory stays flat however
// long the session.
const (
	maxCalls     = 10000
	maxToolNames = 200
	tokenStep    = 5000
)

// Renderer renders envelopes as text. It is an agentstream.Handler: Handle
// must be called from one goroutine at a time, in session order. Each call
// writes its output with one Write. Call Close at the end of the session.
type Renderer struct {
	w     io.Writer
	opt   Options
	width int
	o     out
	err   error

	block       int
	blockParent string
	flowIndent  int
	word        []byte
	wordW       int
	spaces      int // spaces held before the word
	openCall    string
	deferred    []string        // token figures to print when the current block ends
	deltaSeen   map[string]bool // "m"/"t" + parent call: deltas were shown for the coming complete event

	calls      map[string]*call
	parents    map[string]int // depth of the events of a subagent, by the call that spawned it
	plan       []agentstream.PlanStep
	folder     agentstream.UsageFolder
	tokenMark  int64
	turn       int64
	group      bool
	afterEnd   bool   // the recap was the last thing shown
	recapShown string // the recap as last shown, "" before any

	tools     map[string]*toolCount
	toolOrder []string
	first     time.Time
	last      time.Time
	maxTurn   int64
	ended     *agentstream.SessionEnded
	harness   string
	model     string
	title     string
}

type call struct {
	name  string
	at    time.Time
	depth int
	known bool // the adapter knows the tool: it gave a summary
}

type toolCount struct{ calls, failed int }

var _ agentstream.Handler = (*Renderer)(nil)

// New returns a Renderer writing to w.
func New(w io.Writer, opt Options) *Renderer {
	width := opt.Width
	if width <= 0 {
		width = DefaultWidth
	}
	if width < 20 {
		width = 20
	}
	return &Renderer{
		w: w, opt: opt, width: width, o: out{color: opt.Color},
		deltaSeen: map[string]bool{}, calls: map[string]*call{}, parents: map[string]int{},
		tools: map[string]*toolCount{},
	}
}

// Handle renders one envelope. It returns the error of the write, if any.
func (r *Renderer) Handle(_ context.Context, e agentstream.Envelope) error {
	p := agentstream.Typed(e.Payload)
	r.track(&e, p)
	if r.opt.Quiet {
		r.renderQuiet(&e, p)
	} else {
		r.render(&e, p)
		r.settle()
	}
	return r.flush()
}

// Close ends the output: it closes an open line and group and writes the
// step summary.
func (r *Renderer) Close() error {
	r.closeBlock()
	if r.group {
		r.o.command("::endgroup::")
		r.group = false
	}
	if rc := r.folder.Recap(); !r.opt.Quiet && (rc.TokensFrom != "" || rc.CostUSD != nil) && rc.String() != r.recapShown {
		// Usage came after the last recap shown, or no session end came:
		// the recap of the whole input closes the rendering.
		r.o.setStyle(styleDim)
		r.o.text(clipLine("── end of input", r.width) + " ")
		for r.o.col < r.width {
			r.o.text("─")
		}
		r.o.setStyle("")
		r.o.newline()
		r.wrapParts("", "", r.recapParts(&rc))
	}
	r.flush()
	if r.opt.StepSummary != nil {
		if _, err := io.WriteString(r.opt.StepSummary, r.summary()); err != nil && r.err == nil {
			r.err = err
		}
	}
	return r.err
}

func (r *Renderer) flush() error {
	if len(r.o.buf) == 0 {
		return nil
	}
	_, err := r.w.Write(r.o.buf)
	if cap(r.o.buf) > 64<<10 {
		r.o.buf = nil
	} else {
		r.o.buf = r.o.buf[:0]
	}
	if err != nil && r.err == nil {
		r.err = err
	}
	return err
}

func (r *Renderer) ts(e *agentstream.Envelope) time.Time {
	if !e.TS.IsZero() || r.opt.Now == nil {
		return e.TS
	}
	return r.opt.Now()
}

// track keeps what the recap and the summary need, in every mode.
func (r *Renderer) track(e *agentstream.Envelope, p agentstream.Payload) {
	if t := r.ts(e); !t.IsZero() {
		if r.first.IsZero() {
			r.first = t
		}
		r.last = t
	}
	if e.Turn > r.maxTurn {
		r.maxTurn = e.Turn
	}
	r.folder.AddEnvelope(e)
	switch p := p.(type) {
	case *agentstream.SessionStarted:
		r.harness = p.Harness
		if p.Model != "" {
			r.model = p.Model
		}
	case *agentstream.SessionTitle:
		r.title = p.Title
	case *agentstream.SessionEnded:
		r.ended = p
	case *agentstream.ToolCall:
		r.count(p.Name).calls++
	case *agentstream.ToolResult:
		if p.IsError {
			name := p.Name
			if c := r.calls[p.CallID]; c != nil {
				name = c.name
			}
			r.count(name).failed++
		}
	}
	if e.Harness != "" && r.harness == "" {
		r.harness = e.Harness
	}
}

func (r *Renderer) count(name string) *toolCount {
	if name == "" {
		name = "(unnamed)"
	}
	c := r.tools[name]
	if c == nil {
		if len(r.tools) >= maxToolNames {
			name = "(other)"
			if c = r.tools[name]; c != nil {
				return c
			}
		}
		c = &toolCount{}
		r.tools[name] = c
		r.toolOrder = append(r.toolOrder, name)
	}
	return c
}

func (r *Renderer) renderQuiet(e *agentstream.Envelope, p agentstream.Payload) {
	switch p := p.(type) {
	case *agentstream.Error:
		r.errorEvent(e, p)
	case *agentstream.SessionEnded:
		if p.Status != agentstream.StatusSucceeded {
			r.sessionEnded(e, p, true)
		}
	}
}

func (r *Renderer) render(e *agentstream.Envelope, p agentstream.Payload) {
	switch p := p.(type) {
	case *agentstream.SessionStarted:
		r.header(p)
	case *agentstream.TurnStarted, *agentstream.TurnEnded:
		r.endStream()
	case *agentstream.SessionUpdated:
		r.endStream()
		if p.Model != "" && p.Model != r.model {
			r.model = p.Model
			r.note(e, styleDim, "· model "+p.Model)
		}
	case *agentstream.SessionTitle:
		r.note(e, styleDim, "· title: "+p.Title)
	case *agentstream.MessageDelta:
		r.delta(e, false, p.Text)
	case *agentstream.ThinkingDelta:
		r.delta(e, true, p.Text)
	case *agentstream.Message:
		r.message(e, p)
	case *agentstream.Thinking:
		r.thinking(e, p)
	case *agentstream.ToolCall:
		r.toolCall(e, p)
	case *agentstream.ToolResult:
		r.toolResult(e, p)
	case *agentstream.Plan:
		r.planSteps(e, p)
	case *agentstream.Usage:
		r.usage(e)
	case *agentstream.SessionEnded:
		r.sessionEnded(e, p, false)
	case *agentstream.SessionBackground:
		r.background(e, p)
	case *agentstream.Subagent:
		r.subagent(e, p)
	case *agentstream.ToolDenied:
		text := "⊘ " + p.Name + " denied"
		if p.Reason != "" {
			text += ": " + p.Reason
		}
		r.note(e, styleYellow, text)
	case *agentstream.FileChange:
		for _, c := range p.Changes {
			text := "✎ " + c.Kind + " " + c.Path
			if c.MovePath != "" {
				text += " → " + c.MovePath
			}
			if added, removed, ok := diffCounts(c.Diff); ok {
				text += fmt.Sprintf("  +%d −%d", added, removed)
			}
			r.note(e, "", text)
		}
	case *agentstream.PermissionRequest:
		r.note(e, styleYellow, "? permission requested: "+p.Name)
	case *agentstream.Question:
		for _, q := range p.Questions {
			r.note(e, styleYellow, "? "+q.Question)
		}
	case *agentstream.RequestResolved:
		text := "→ " + p.Outcome
		if p.Auto {
			text += " by policy"
		}
		r.note(e, styleDim, text)
	case *agentstream.Compaction:
		text := "⟲ context compacted"
		if p.Trigger != "" {
			text += " (" + p.Trigger + ")"
		}
		if p.PreTokens != nil {
			text += ": " + agentstream.Thousands(*p.PreTokens)
			if p.PostTokens != nil {
				text += " → " + agentstream.Thousands(*p.PostTokens)
			}
			text += " tokens"
		}
		r.note(e, styleDim, text)
	case *agentstream.Quota:
		r.quota(e, p)
	case *agentstream.Retry:
		r.warn(e, "↻ ", retryText(p))
	case *agentstream.Error:
		r.errorEvent(e, p)
	case *agentstream.Warning:
		r.warn(e, "⚠ ", p.Message)
	case *agentstream.Stderr:
		r.para(e, styleDim, "│ ", p.Text)
	case *agentstream.Hook:
		if p.Status == "finished" && p.Outcome != "" && p.Outcome != "success" {
			r.note(e, styleYellow, "⚠ hook "+p.Name+": "+p.Outcome)
		}
	case *agentstream.Fallback:
		r.warn(e, "⚠ ", fallbackText(p))
	case *agentstream.Raw:
		r.raw(e, p)
	}
}

// settle writes a word held for wrapping when it fits where it is, so that
// streamed text shows without waiting for the next piece.
func (r *Renderer) settle() {
	if (r.block == blockText || r.block == blockThinking) && len(r.word) > 0 && r.o.col > 0 && r.o.col+r.spaces+r.wordW <= r.width {
		r.flushWord()
	}
}

// ensureTurn opens the turn's group in GitHub mode, or writes a divider
// between turns otherwise, before output of turn t.
func (r *Renderer) ensureTurn(t int64) {
	if t <= 0 || t == r.turn {
		return
	}
	prev := r.turn
	r.turn = t
	r.closeBlock()
	if r.opt.CI == CIGitHub {
		if r.group {
			r.o.command("::endgroup::")
		}
		r.o.command("::group::Turn " + strconv.FormatInt(t, 10))
		r.group = true
		return
	}
	if prev > 0 {
		r.o.styled(styleDim, "── turn "+strconv.FormatInt(t, 10)+" ──")
		r.o.newline()
	}
}

// begin prepares a line of its own for output of e.
func (r *Renderer) begin(e *agentstream.Envelope) {
	r.ensureTurn(e.Turn)
	r.closeBlock()
	r.afterEnd = false
}

// endStream ends streamed text at a boundary of the session (a turn, a
// restart of the harness), so that the next text starts on a line of its
// own.
func (r *Renderer) endStream() {
	if r.block == blockText || r.block == blockThinking {
		r.closeBlock()
	}
}

// closeBlock ends the current block and prints deferred figures.
func (r *Renderer) closeBlock() {
	r.flushWord()
	r.spaces = 0
	r.o.setStyle("")
	r.o.endLine()
	r.block, r.blockParent, r.openCall = blockNone, "", ""
	if len(r.deferred) > 0 {
		parts := r.deferred
		r.deferred = nil
		r.wrapParts(styleDim, "◆ ", parts)
	}
}

// depth is the nesting of the events of the subagent spawned by call
// parent: 0 for the main agent.
func (r *Renderer) depth(parent string) int {
	if parent == "" {
		return 0
	}
	if d, ok := r.parents[parent]; ok {
		return d
	}
	if c := r.calls[parent]; c != nil {
		return c.depth + 1
	}
	return 1
}

func (r *Renderer) indent(parent string) int { return 2 * r.depth(parent) }

// note writes one line, clipped to the width.
func (r *Renderer) note(e *agentstream.Envelope, style, text string) {
	r.begin(e)
	ind := r.indent(e.ParentCallID)
	r.o.spaces(ind)
	r.o.styled(style, clipLine(text, r.width-ind))
	r.o.newline()
}

// para writes text wrapped to the width, after prefix, in style.
func (r *Renderer) para(e *agentstream.Envelope, style, prefix, text string) {
	r.begin(e)
	ind := r.indent(e.ParentCallID)
	r.o.spaces(ind)
	r.o.setStyle(style)
	r.o.text(prefix)
	r.flowIndent = ind + width(prefix)
	r.flowText(text)
	r.closeBlock()
}

// flowText writes streamed text, wrapping at spaces to the width and
// indenting continuation lines by flowIndent. Spaces wait with the word
// after them, so that no line ends with spaces where it wraps.
func (r *Renderer) flowText(s string) {
	s = strip(s)
	for _, c := range s {
		switch c {
		case '\n':
			r.flushWord()
			r.spaces = 0
			r.o.newline()
		case ' ', '\t':
			r.flushWord()
			if r.o.col == 0 {
				// Indentation at the start of a line is kept.
				r.o.spaces(r.flowIndent)
				r.o.rune(c)
				continue
			}
			if c == '\t' {
				r.spaces += 4 - (r.o.col+r.spaces)%4
			} else {
				r.spaces++
			}
		default:
			r.word = utf8.AppendRune(r.word, c)
			r.wordW += runeWidth(c)
			if r.wordW >= r.width-r.flowIndent {
				r.flushWord()
			}
		}
	}
}

// flushWord writes the word held for wrapping, with the spaces before it,
// or on a new line when it does not fit.
func (r *Renderer) flushWord() {
	if len(r.word) == 0 {
		return
	}
	switch {
	case r.o.col == 0:
		r.o.spaces(r.flowIndent)
	case r.o.col+r.spaces+r.wordW > r.width:
		r.o.newline()
		r.o.spaces(r.flowIndent)
	default:
		r.o.spaces(r.spaces)
	}
	r.spaces = 0
	for i := 0; i < len(r.word); {
		c, n := utf8.DecodeRune(r.word[i:])
		r.o.rune(c)
		i += n
	}
	r.word, r.wordW = r.word[:0], 0
}

// wrapParts writes parts joined by " · ", breaking lines between parts to
// fit the width; continuation lines are indented like the first part.
func (r *Renderer) wrapParts(style, prefix string, parts []string) {
	r.o.setStyle(style)
	r.o.text(prefix)
	lead := width(prefix)
	for i, p := range parts {
		p = clipLine(p, r.width-lead)
		if i > 0 {
			if r.o.col+3+width(p) > r.width {
				r.o.newline()
				r.o.spaces(lead)
			} else {
				r.o.text(" · ")
			}
		}
		r.o.text(p)
	}
	r.o.setStyle("")
	r.o.newline()
}

func (r *Renderer) header(p *agentstream.SessionStarted) {
	r.closeBlock()
	r.afterEnd = false
	parts := []string{}
	name := p.Harness
	if name == "" {
		name = r.harness
	}
	if p.Version != "" {
		name += " " + p.Version
	}
	if name != "" {
		parts = append(parts, name)
	}
	if p.Model != "" {
		parts = append(parts, p.Model)
	}
	if p.Cwd != "" {
		parts = append(parts, p.Cwd)
	}
	r.o.styled(styleBold, "▶ ")
	r.o.styled(styleBold, clipLine(strings.Join(parts, " · "), r.width-2))
	r.o.newline()
	if p.SessionID != "" {
		r.o.styled(styleDim, clipLine("  session "+p.SessionID, r.width))
		r.o.newline()
	}
}

func (r *Renderer) delta(e *agentstream.Envelope, thinking bool, text string) {
	kind, key := blockText, "m"+e.ParentCallID
	if thinking {
		kind, key = blockThinking, "t"+e.ParentCallID
	}
	if r.block != kind || r.blockParent != e.ParentCallID {
		r.begin(e)
		r.block, r.blockParent = kind, e.ParentCallID
		ind := r.indent(e.ParentCallID)
		r.flowIndent = ind
		if thinking {
			r.o.spaces(ind)
			r.o.setStyle(styleDimItalic)
			r.o.text("∴ ")
			r.flowIndent = ind + 2
		}
	}
	r.deltaSeen[key] = true
	r.flowText(text)
}

// shown reports whether deltas already showed the complete event of key,
// and closes their block.
func (r *Renderer) shown(e *agentstream.Envelope, key string, kind int) bool {
	if !r.deltaSeen[key] {
		return false
	}
	delete(r.deltaSeen, key)
	if r.block == kind && r.blockParent == e.ParentCallID {
		r.closeBlock()
	}
	return true
}

func (r *Renderer) message(e *agentstream.Envelope, p *agentstream.Message) {
	if r.shown(e, "m"+e.ParentCallID, blockText) {
		return
	}
	switch p.Role {
	case agentstream.RoleUser:
		style := styleBold
		if e.Origin == agentstream.OriginReplay {
			style = styleDim
		}
		r.note(e, style, "› "+headline(p.Text))
	case agentstream.RoleSystem:
		r.note(e, styleDim, "· "+headline(p.Text))
	default:
		if strings.TrimSpace(p.Text) == "" {
			return
		}
		r.begin(e)
		r.block, r.blockParent = blockText, e.ParentCallID
		r.flowIndent = r.indent(e.ParentCallID)
		r.flowText(strings.TrimRight(p.Text, "\n"))
		r.closeBlock()
	}
}

func (r *Renderer) thinking(e *agentstream.Envelope, p *agentstream.Thinking) {
	if r.shown(e, "t"+e.ParentCallID, blockThinking) {
		return
	}
	if strings.TrimSpace(p.Text) == "" {
		if p.Redacted {
			r.note(e, styleDimItalic, "∴ (reasoning hidden)")
		}
		return
	}
	r.para(e, styleDimItalic, "∴ ", strings.TrimRight(p.Text, "\n"))
}

// icons of tool categories; each takes one column.
var icons = map[string]string{
	agentstream.CategoryRead:     "▤",
	agentstream.CategoryEdit:     "✎",
	agentstream.CategoryDelete:   "⌫",
	agentstream.CategoryMove:     "⇄",
	agentstream.CategorySearch:   "⌕",
	agentstream.CategoryExecute:  "❯",
	agentstream.CategoryFetch:    "⇣",
	agentstream.CategoryThink:    "∴",
	agentstream.CategoryDelegate: "↳",
	agentstream.CategoryPlan:     "☰",
	agentstream.CategoryAsk:      "?",
	agentstream.CategoryMCP:      "⧉",
}

func icon(category string) string {
	if i, ok := icons[category]; ok {
		return i
	}
	return "•"
}

func (r *Renderer) toolCall(e *agentstream.Envelope, p *agentstream.ToolCall) {
	r.begin(e)
	d := r.depth(e.ParentCallID)
	if len(r.calls) >= maxCalls {
		clear(r.calls)
	}
	name := p.DisplayName
	if name == "" {
		name = p.Name
	}
	r.calls[p.CallID] = &call{name: name, at: r.ts(e), depth: d, known: p.Summary != ""}
	if p.Category == agentstream.CategoryDelegate {
		if len(r.parents) >= maxCalls {
			clear(r.parents)
		}
		r.parents[p.CallID] = d + 1
	}
	r.o.spaces(2 * d)
	r.o.styled(styleCyan, icon(p.Category))
	r.o.text(" ")
	r.o.styled(styleBold, clipLine(name, 40))
	if p.Summary != "" {
		if room := r.width - r.o.col - 2; room > 4 {
			r.o.text("  ")
			r.o.text(clipLine(p.Summary, room))
		}
	}
	r.block, r.openCall = blockTool, p.CallID
}

func (r *Renderer) toolResult(e *agentstream.Envelope, p *agentstream.ToolResult) {
	c := r.calls[p.CallID]
	delete(r.calls, p.CallID)
	mark, style := "✓", styleGreen
	if p.IsError {
		mark, style = "✗", styleRed
	}
	stats := r.resultStats(e, c, p)
	d := r.depth(e.ParentCallID)
	if c != nil {
		d = c.depth
	}
	if r.block == blockTool && r.openCall == p.CallID && r.o.col+3+width(stats)+1 <= r.width {
		r.o.text("  ")
		r.o.styled(style, mark)
		if stats != "" {
			r.o.text(" ")
			r.o.styled(styleDim, stats)
		}
		r.o.newline()
		r.block, r.openCall = blockNone, ""
	} else {
		r.begin(e)
		name := p.Name
		if c != nil {
			name = c.name
		}
		r.o.spaces(2 * d)
		r.o.styled(style, mark)
		r.o.text(" ")
		r.o.styled(styleBold, clipLine(name, 40))
		if stats != "" {
			r.o.text("  ")
			r.o.styled(styleDim, clipLine(stats, r.width-r.o.col))
		}
		r.o.newline()
	}
	if p.IsError && c != nil && c.known {
		if first := firstLine(p.Output); first != "" {
			r.o.spaces(2*d + 2)
			r.o.styled(styleRed, clipLine(first, r.width-2*d-2))
			r.o.newline()
		}
	}
	r.closeBlock()
}

func (r *Renderer) resultStats(e *agentstream.Envelope, c *call, p *agentstream.ToolResult) string {
	var parts []string
	if p.ExitCode != nil && *p.ExitCode != 0 {
		parts = append(parts, "exit "+strconv.FormatInt(*p.ExitCode, 10))
	}
	switch {
	case p.Characters > 0:
		parts = append(parts, chars(p.Characters))
	case p.Output == "":
		parts = append(parts, "no output")
	default:
		parts = append(parts, chars(int64(utf8.RuneCountInString(p.Output))))
	}
	if c != nil && !c.at.IsZero() {
		if t := r.ts(e); !t.IsZero() && !t.Before(c.at) {
			parts = append(parts, agentstream.FormatDurationMs(t.Sub(c.at).Milliseconds()))
		}
	}
	return strings.Join(parts, " · ")
}

// chars formats an output size in characters: 950 chars, 12.3k chars,
// 1.2M chars.
func chars(n int64) string {
	switch {
	case n < 10_000:
		return agentstream.Thousands(n) + " chars"
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k chars"
	default:
		return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + "M chars"
	}
}

func (r *Renderer) planSteps(e *agentstream.Envelope, p *agentstream.Plan) {
	if samePlan(r.plan, p.Steps) {
		return
	}
	r.plan = append(r.plan[:0], p.Steps...)
	r.begin(e)
	ind := r.indent(e.ParentCallID)
	r.o.spaces(ind)
	r.o.styled(styleBold, "☰ plan")
	r.o.newline()
	for _, s := range p.Steps {
		box, style := "[ ]", ""
		switch s.Status {
		case agentstream.StepCompleted:
			box, style = "[x]", styleGreen
		case agentstream.StepInProgress:
			box, style = "[>]", styleYellow
		case agentstream.StepCancelled:
			box, style = "[-]", styleDim
		}
		r.o.spaces(ind + 2)
		r.o.styled(style, box)
		r.o.text(" ")
		r.o.text(clipLine(s.Text, r.width-ind-6))
		r.o.newline()
	}
}

func samePlan(a, b []agentstream.PlanStep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// usage prints the token figures each time the total passes another
// tokenStep tokens; while a block is open they wait for it to end.
func (r *Renderer) usage(e *agentstream.Envelope) {
	rc := r.folder.Recap()
	mark := rc.TotalTokens() / tokenStep
	if mark <= r.tokenMark {
		return
	}
	r.tokenMark = mark
	if r.afterEnd {
		return // the recap has the figures
	}
	r.deferred = tokenParts(&rc)
	if r.block == blockNone {
		r.ensureTurn(e.Turn)
		r.closeBlock()
	}
}

func tokenParts(rc *agentstream.Recap) []string {
	parts := []string{agentstream.Thousands(rc.TotalTokens()) + " tokens"}
	if rc.OutputTokens != nil {
		parts = append(parts, "out "+agentstream.Thousands(*rc.OutputTokens))
	}
	if rc.ContextTokens != nil {
		c := "context " + agentstream.Thousands(*rc.ContextTokens)
		if w := rc.ContextWindow; w != nil && *w > 0 {
			c += fmt.Sprintf(" (%.0f%% of %s)", 100*float64(*rc.ContextTokens)/float64(*w), short(*w))
		}
		parts = append(parts, c)
	}
	return parts
}

// short formats a context window: 200k, 1M, 1,048,576.
func short(n int64) string {
	switch {
	case n%1_000_000 == 0:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	case n%1000 == 0:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return agentstream.Thousands(n)
}

// tokenFigures are the token counts of a recap, saying "—" for a count
// nobody reported.
func tokenFigures(rc *agentstream.Recap) []string {
	f := func(label, key string, v *int64) string {
		return label + " " + rc.FormatFigure(key, v)
	}
	parts := []string{f("in", agentstream.FigureInputTokens, rc.InputTokens), f("out", agentstream.FigureOutputTokens, rc.OutputTokens)}
	if rc.CacheReadTokens != nil {
		parts = append(parts, f("cache read", agentstream.FigureCacheReadTokens, rc.CacheReadTokens))
	}
	if rc.CacheCreationTokens != nil {
		parts = append(parts, f("cache write", agentstream.FigureCacheCreationTokens, rc.CacheCreationTokens))
	}
	return parts
}

// plural says n things: "1 model call", "3 model calls".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}

// costFigure is the reported cost, "≥" before a lower bound, or "".
func costFigure(rc *agentstream.Recap) string {
	if rc.CostUSD == nil {
		return ""
	}
	c := agentstream.FormatCost(*rc.CostUSD)
	if rc.IsEstimated(agentstream.FigureCostUSD) {
		c = "≥" + c
	}
	return c
}

func contextText(rc *agentstream.Recap) string {
	if f := contextFigure(rc); f != "" {
		return "context " + f
	}
	return ""
}

// contextFigure is the context used, of the window when it is known.
func contextFigure(rc *agentstream.Recap) string {
	if rc.ContextTokens == nil {
		return ""
	}
	s := agentstream.Thousands(*rc.ContextTokens)
	if w := rc.ContextWindow; w != nil && *w > 0 {
		s += fmt.Sprintf(" of %s (%.0f%%)", agentstream.Thousands(*w), 100*float64(*rc.ContextTokens)/float64(*w))
	}
	return s
}

// recapParts are the figures of the end-of-session recap.
func (r *Renderer) recapParts(rc *agentstream.Recap) []string {
	var parts []string
	turns := r.maxTurn
	if rc.Turns != nil {
		turns = *rc.Turns
	}
	if turns == 1 {
		parts = append(parts, "1 turn")
	} else if turns > 1 {
		parts = append(parts, strconv.FormatInt(turns, 10)+" turns")
	}
	if n := rc.ModelCalls; n != nil && *n > 0 {
		parts = append(parts, plural(*n, "model call"))
	}
	if d, ok := r.duration(rc); ok {
		parts = append(parts, agentstream.FormatDurationMs(d))
	}
	if rc.TokensFrom == "" {
		parts = append(parts, "tokens not reported")
	} else {
		parts = append(parts, tokenFigures(rc)...)
	}
	if c := costFigure(rc); c != "" {
		parts = append(parts, "cost "+c)
	} else {
		parts = append(parts, "cost not reported")
	}
	if rc.PremiumRequests != nil {
		parts = append(parts, "premium requests "+strconv.FormatFloat(*rc.PremiumRequests, 'f', -1, 64))
	}
	if c := contextText(rc); c != "" {
		parts = append(parts, c)
	}
	return parts
}

// duration is the harness's own figure, else the span of the timestamps.
func (r *Renderer) duration(rc *agentstream.Recap) (int64, bool) {
	if rc.DurationMs != nil {
		return *rc.DurationMs, true
	}
	if !r.first.IsZero() && r.last.After(r.first) {
		return r.last.Sub(r.first).Milliseconds(), true
	}
	return 0, false
}

func statusStyle(status string) string {
	switch status {
	case agentstream.StatusSucceeded:
		return styleGreen
	case agentstream.StatusCancelled:
		return styleYellow
	}
	return styleRed
}

func (r *Renderer) sessionEnded(e *agentstream.Envelope, p *agentstream.SessionEnded, quiet bool) {
	r.closeBlock()
	if r.group {
		r.o.command("::endgroup::")
		r.group = false
	}
	head := "── " + orUnknown(p.Status)
	if p.Reason != "" {
		head += " · " + p.Reason
	}
	if p.StopReason != "" && p.StopReason != "end_turn" {
		head += " · " + p.StopReason
	}
	head = clipLine(head, r.width)
	r.o.setStyle(statusStyle(p.Status))
	r.o.text(head + " ")
	for r.o.col < r.width {
		r.o.text("─")
	}
	r.o.setStyle("")
	r.o.newline()
	if !quiet {
		rc := r.folder.Recap()
		r.wrapParts("", "", r.recapParts(&rc))
		r.recapShown = rc.String()
	}
	if p.Error != "" {
		r.para(e, styleRed, "error: ", clipText(p.Error, 1000))
	}
	r.afterEnd = true
	if r.opt.CI == CIGitHub && p.Status == agentstream.StatusFailed {
		msg := "session failed"
		if p.Reason != "" {
			msg += " (" + p.Reason + ")"
		}
		if p.Error != "" {
			msg += ": " + clipText(p.Error, 1000)
		}
		r.o.command("::error::" + escapeData(msg))
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func (r *Renderer) errorEvent(e *agentstream.Envelope, p *agentstream.Error) {
	msg := p.Message
	if msg == "" {
		msg = p.ErrorType
	}
	if r.opt.CI == CIGitHub {
		r.ensureTurn(e.Turn)
		r.closeBlock()
		r.o.command("::error::" + escapeData(clipText(msg, 2000)))
		return
	}
	r.para(e, styleRed, "✗ error: ", msg)
}

// warn writes a warning: a ::warning:: command in GitHub mode, else a
// yellow paragraph.
func (r *Renderer) warn(e *agentstream.Envelope, prefix, text string) {
	if r.opt.CI == CIGitHub {
		r.ensureTurn(e.Turn)
		r.closeBlock()
		r.o.command("::warning::" + escapeData(clipText(text, 2000)))
		return
	}
	r.para(e, styleYellow, prefix, text)
}

func (r *Renderer) quota(e *agentstream.Envelope, p *agentstream.Quota) {
	if p.Status == "allowed" || p.Status == "" && p.Message == "" {
		return
	}
	text := "quota"
	if p.Status != "" {
		text += " " + p.Status
	}
	if p.LimitType != "" {
		text += " (" + p.LimitType + ")"
	}
	if p.Utilization != nil {
		u := *p.Utilization
		if u <= 1 {
			u *= 100
		}
		text += fmt.Sprintf(", %.0f%% used", u)
	}
	if p.ResetAt != "" {
		text += ", resets " + p.ResetAt
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	r.warn(e, "⚠ ", text)
}

func retryText(p *agentstream.Retry) string {
	text := "retry"
	if p.Attempt != nil {
		text += " " + strconv.FormatInt(*p.Attempt, 10)
		if p.MaxRetries != nil {
			text += "/" + strconv.FormatInt(*p.MaxRetries, 10)
		}
	}
	if p.DelayMs != nil {
		text += " in " + agentstream.FormatDurationMs(int64(*p.DelayMs))
	}
	if p.Error != "" {
		text += ": " + p.Error
	}
	if p.Status != nil {
		text += " (status " + strconv.FormatInt(*p.Status, 10) + ")"
	}
	return text
}

func fallbackText(p *agentstream.Fallback) string {
	target := func(t *agentstream.FallbackTarget) string {
		if t == nil {
			return "?"
		}
		s := t.Harness
		if t.Model != "" {
			if s != "" {
				s += " "
			}
			s += t.Model
		}
		return orUnknown(s)
	}
	text := "fallback from " + target(p.From) + " to " + target(p.To)
	if p.Failure != "" {
		text += " (" + p.Failure + ")"
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	return text
}

func (r *Renderer) background(e *agentstream.Envelope, p *agentstream.SessionBackground) {
	text := "⧗ background"
	if p.Kind != "" {
		text += " " + p.Kind
	}
	if p.Status != "" {
		text += " " + p.Status
	}
	if d := firstNonEmpty(p.Description, p.Summary); d != "" {
		text += ": " + d
	}
	style := styleDim
	if p.Status == "failed" {
		style = styleRed
	}
	r.note(e, style, text)
}

func (r *Renderer) subagent(e *agentstream.Envelope, p *agentstream.Subagent) {
	name := firstNonEmpty(p.Name, "subagent")
	switch p.Status {
	case agentstream.SubagentStarted:
		if _, shown := r.calls[p.CallID]; shown {
			return
		}
		text := "↳ " + name
		if p.Description != "" {
			text += ": " + p.Description
		}
		r.note(e, "", text)
	case agentstream.SubagentFailed:
		r.note(e, styleRed, "↳ "+name+" failed")
	}
}

func (r *Renderer) raw(e *agentstream.Envelope, p *agentstream.Raw) {
	line := int64(0)
	if e.Source != nil {
		line = e.Source.Line
	}
	switch p.Reason {
	case agentstream.RawText:
		r.para(e, "", "", p.Text)
	case agentstream.RawMalformed:
		r.para(e, styleDim, "", p.Text)
	case agentstream.RawOversized:
		r.note(e, styleDim, fmt.Sprintf("· line %d not shown: %s bytes", line, agentstream.Thousands(p.Bytes)))
	case agentstream.RawAdapterError:
		r.note(e, styleYellow, fmt.Sprintf("⚠ line %d could not be read (adapter error)", line))
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// headline is the first line of a message, with " …" when more follows.
func headline(s string) string {
	text := strings.TrimSpace(strip(s))
	first, rest, more := strings.Cut(text, "\n")
	if more && strings.TrimSpace(rest) != "" {
		first += " …"
	}
	return first
}

// firstLine is the first non-blank line of s, stripped.
func firstLine(s string) string {
	for l := range strings.SplitSeq(strip(s), "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// clipLine returns the first line of s, stripped of control characters and
// cut to max columns with "…" when it is longer.
func clipLine(s string, max int) string {
	s = strip(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	s = strings.ReplaceAll(s, "\t", " ")
	if max < 1 {
		max = 1
	}
	if !cut && width(s) <= max {
		return s
	}
	w := 0
	for i, c := range s {
		cw := runeWidth(c)
		if w+cw > max-1 {
			return s[:i] + "…"
		}
		w += cw
	}
	return s + "…"
}

// clipText cuts s to max characters with "…".
func clipText(s string, max int) string {
	if c, cut := agentstream.Clip(s, max); cut {
		return c + "…"
	}
	return s
}

// escapeData escapes the data of a workflow command and applies the rules
// of Sanitize to it, so that it stays one command.
func escapeData(s string) string {
	s = strings.ReplaceAll(Sanitize(s), "\t", " ")
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// diffCounts counts the added and removed lines of a unified diff.
func diffCounts(diff string) (added, removed int, ok bool) {
	for len(diff) > 0 {
		line := diff
		if i := strings.IndexByte(diff, '\n'); i >= 0 {
			line, diff = diff[:i], diff[i+1:]
		} else {
			diff = ""
		}
		switch {
		case strings.HasPrefix(line, "+++ ") || strings.HasPrefix(line, "--- "):
		case strings.HasPrefix(line, "@@"):
			ok = true
		case strings.HasPrefix(line, "+"):
			added++
		case strings.HasPrefix(line, "-"):
			removed++
		}
	}
	return added, removed, ok
}
