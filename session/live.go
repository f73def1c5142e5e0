package session

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/driver"
	"github.com/agentstream/agentstream/runner"
)

// live is what the goroutine running a session owns: the state machine of
// states, turns, messages and requests, which is the runner's Hook and the
// driver's Host. Between two runs (a fallback) the session's goroutine owns
// it; while a harness runs, the runner's loop does, which calls it.
type live struct {
	s   *Session
	c   *runner.Conn
	drv driver.Driver

	// Kept from run to run.
	state, stateReason string
	nextMsg            int
	queue              []*message
	lastSeq, turn      int64 // of the latest envelope, to continue from
	turns              int64 // turns started
	cost               float64
	tokens             int64
	costBase           float64 // spent by the earlier runs
	tokensBase         int64
	candidate, runs    int
	next               int // the candidate to run next after a fallback, or -1
	closing            bool
	closeReason        string
	budgetEnd          string // why the budget ends the session, once it does
	harnessSession     string
	resumeNext         string                // the conversation the next run resumes
	owed               []agentstream.Payload // events for the next run to record first
	answered           map[string]bool       // ids of requests resolved
	avail              []availability        // exhausted accounts and when they reset

	// Of the current run.
	caps          driver.Caps
	ready         bool
	turnOpen      bool
	background    int  // the harness's background tasks still to start their turns
	bySession     bool // the session opened the running turn for a message
	adapterOpened bool // the adapter's turn.started for it was seen
	inTurn        []*message
	echoes        []string            // texts sent this run that the harness may print back
	requests      map[string]*request // by id and alias
	order         []*request
	tools         map[string]toolInfo
	interrupting  bool
	stopInterrupt func() bool
	stopClose     func() bool
	forced        string // why the harness was stopped during an interrupt
	failReason    string // why the driver gave up on the conversation
	endedByHook   bool   // the hook recorded a session.ended of its own
	exh           exhaustion
	fallback      bool // the run ends for a fallback to the next candidate
	folder        agentstream.UsageFolder
}

// message is one message sent to the session.
type message struct {
	id, text, mode string
	accepted       bool // its message.accepted was recorded
	emulated       bool
	reason         string
}

// request is a pending request.
type request struct {
	Request
	stop func() bool // stops its ask timeout
}

// toolInfo is what a tool.call said of a call, for the policy.
type toolInfo struct{ category, summary string }

// maxTools bounds the calls remembered for the policy.
const maxTools = 4096

func newLive(s *Session) *live {
	return &live{s: s, next: -1, answered: map[string]bool{}}
}

// var _ pins the interfaces live implements.
var (
	_ runner.Hook = (*live)(nil)
	_ driver.Host = (*live)(nil)
)

func (l *live) emit(p agentstream.Payload) { l.c.Emit(p) }

// record emits p, or keeps it for the next run when no harness runs.
func (l *live) record(p agentstream.Payload) {
	if l.c == nil {
		l.owed = append(l.owed, p)
		return
	}
	l.emit(p)
}

// enqueue makes a message; the caller puts it where it goes.
func (l *live) enqueue(text, mode string) *message {
	l.nextMsg++
	m := &message{id: "m" + strconv.Itoa(l.nextMsg), text: text, mode: mode}
	if mode == agentstream.ModeQueue && l.c == nil {
		// The first message, given before the harness started.
		l.queue = append(l.queue, m)
	}
	return m
}

// accept records a message's acceptance.
func (l *live) accept(m *message, status string) {
	m.accepted = true
	l.emit(&agentstream.SentAccepted{MessageID: m.id, Mode: m.mode, Status: status, Emulated: m.emulated, Reason: m.reason})
}

func (l *live) firstText() string {
	if len(l.queue) > 0 {
		return l.queue[0].text
	}
	return ""
}

// beginRun prepares the state of a run of candidate c.
func (l *live) beginRun(c Candidate) {
	l.runs++
	l.next = -1
	l.ready, l.turnOpen, l.bySession, l.adapterOpened = false, false, false, false
	l.background = 0
	l.inTurn, l.echoes = nil, nil
	l.requests, l.order, l.tools = map[string]*request{}, nil, map[string]toolInfo{}
	l.interrupting, l.forced, l.failReason, l.endedByHook, l.fallback = false, "", "", false, false
	l.folder = agentstream.UsageFolder{}
	l.costBase, l.tokensBase = l.cost, l.tokens
}

func (l *live) resumeID() string {
	if l.runs == 0 {
		return l.s.cfg.Resume
	}
	return l.resumeNext
}

// Start is the runner's Hook: the harness runs.
func (l *live) Start(c *runner.Conn) {
	l.c = c
	l.s.markStarted()
	l.caps = l.drv.Caps()
	if l.state == "" {
		l.setState(agentstream.StateIdle, "the session started")
	}
	for _, p := range l.owed {
		l.emit(p)
	}
	l.owed = nil
	for _, m := range l.queue {
		if !m.accepted {
			l.accept(m, agentstream.MessageQueued)
		}
	}
	l.watchAvailability()
	l.drv.Start(c, l)
	l.afterChange()
}

// setState records a change of state.
func (l *live) setState(st, reason string) {
	if st == l.state {
		return
	}
	prev := l.state
	l.state, l.stateReason = st, reason
	if l.c != nil {
		l.emit(&agentstream.SessionState{State: st, Previous: prev, Reason: reason})
	}
}

// afterChange does what a change may have made due: the next message,
// the end of a session past its budget, the idle timeout's standing, the
// snapshot.
func (l *live) afterChange() {
	if l.c == nil {
		return
	}
	l.pump()
	if l.s.cfg.CloseWhenIdle && l.turns > 0 && !l.turnOpen && len(l.queue) == 0 && l.background == 0 && !l.closing {
		l.close("the conversation's messages were answered")
	}
	if l.budgetEnd != "" && !l.turnOpen && !l.closing {
		l.emit(&agentstream.SessionEnded{Status: agentstream.StatusCancelled, Reason: agentstream.ReasonBudget, Error: l.budgetEnd})
		l.endedByHook = true
		l.close("budget: " + l.budgetEnd)
	}
	l.c.Waiting(!l.turnOpen || len(l.order) > 0)
	l.publish()
}

// pump starts the next queued message when the harness can take it.
func (l *live) pump() {
	if l.c == nil || !l.ready || l.turnOpen || l.closing || l.fallback || len(l.queue) == 0 {
		return
	}
	if max := l.s.cfg.Budget.MaxTurns; max > 0 && l.turns >= max {
		l.overBudget(fmt.Sprintf("%d turns reached (the most is %d)", l.turns, max))
		return
	}
	m := l.queue[0]
	l.queue = l.queue[1:]
	l.setState(agentstream.StateRunning, "message "+m.id)
	l.openTurn(true)
	l.inTurn = append(l.inTurn, m)
	l.emit(&agentstream.SentStarted{MessageID: m.id, Mode: m.mode, Status: agentstream.MessageRunning})
	l.sent(m, "")
	if err := l.drv.Send(l.c, m.text); err != nil {
		l.endTurn(agentstream.StatusFailed, "send: "+err.Error())
		l.emit(&agentstream.TurnEnded{Turn: l.c.Turn(), Reason: agentstream.TurnError})
	}
}

// openTurn records the start of a turn.
func (l *live) openTurn(bySession bool) {
	l.turnOpen, l.bySession, l.adapterOpened = true, bySession, !bySession
	l.turns++
	l.exh = exhaustion{}
	if bySession {
		l.emit(&agentstream.TurnStarted{Turn: l.c.Turn() + 1})
	}
}

// agentTurn records a turn the agent started by itself.
func (l *live) agentTurn() {
	l.setState(agentstream.StateRunning, "the agent started a turn")
	l.openTurn(false)
	if max := l.s.cfg.Budget.MaxTurns; max > 0 && l.turns > max {
		l.overBudget(fmt.Sprintf("%d turns reached (the most is %d)", l.turns, max))
	}
}

// endTurn records the end of the running turn: its messages completed, the
// session idle (or falling back to the next candidate).
func (l *live) endTurn(status, msg string) {
	l.turnOpen = false
	if l.stopInterrupt != nil {
		l.stopInterrupt()
		l.stopInterrupt = nil
	}
	l.interrupting = false
	if status == agentstream.StatusFailed {
		l.exh.failed(msg)
	}
	if status == agentstream.StatusFailed && l.exh.seen && !l.closing && l.candidate+1 < len(l.s.cfg.Candidates) {
		// The account is exhausted: the turn's messages go again on the
		// next candidate, and this harness is done.
		l.queue = append(l.inTurn, l.queue...)
		l.inTurn = nil
		l.fallback = true
		l.c.Stop("", "")
		return
	}
	for _, m := range l.inTurn {
		l.emit(&agentstream.SentCompleted{MessageID: m.id, Mode: m.mode, Status: status, Error: msg})
	}
	l.inTurn = nil
	if !l.closing {
		l.setState(agentstream.StateIdle, "the turn ended ("+status+")")
	}
}

// Event is the runner's Hook: it sees each event of the harness before it
// is recorded.
func (l *live) Event(c *runner.Conn, ev agentstream.Event) (agentstream.Event, bool) {
	p := agentstream.Typed(ev.Payload)
	if l.turnOpen {
		l.exh.observe(p)
	}
	switch p := p.(type) {
	case *agentstream.TurnStarted:
		if l.turnOpen {
			// The adapter's start of the turn the session opened (or a
			// repeat): the turn has its turn.started.
			l.adapterOpened = true
			return ev, false
		}
		if ev.Replay {
			return ev, true
		}
		l.agentTurn()
		ev.Payload = &agentstream.TurnStarted{Turn: c.Turn() + 1}
		return ev, true
	case *agentstream.TurnEnded:
		if !l.turnOpen {
			return ev, true
		}
		l.endTurn(turnStatus(p.Reason), "")
		ev.Payload = &agentstream.TurnEnded{Turn: c.Turn(), Reason: p.Reason}
		return ev, true
	case *agentstream.SessionEnded:
		if l.turnOpen {
			l.exh.observe(p)
			l.endTurn(p.Status, p.Error)
			l.emit(&agentstream.TurnEnded{Turn: c.Turn(), Reason: turnReason(p.Status)})
		}
		return ev, true
	case *agentstream.Message:
		if p.Role == agentstream.RoleUser && !ev.Replay && ev.ParentCallID == "" && l.echoed(p.Text) {
			// The harness printed back a message the session sent and
			// recorded already.
			return ev, false
		}
	case *agentstream.ToolCall:
		if p.CallID != "" && len(l.tools) < maxTools {
			l.tools[p.CallID] = toolInfo{category: p.Category, summary: p.Summary}
		}
	}
	if !l.turnOpen && !ev.Replay && isWork(p) {
		l.agentTurn()
		l.emit(&agentstream.TurnStarted{Turn: c.Turn() + 1})
	}
	return ev, true
}

// echoed reports whether text is the next echo of a message the session
// sent, and forgets it.
func (l *live) echoed(text string) bool {
	for i, e := range l.echoes {
		if e == text {
			l.echoes = append(l.echoes[:i], l.echoes[i+1:]...)
			return true
		}
	}
	return false
}

// sent records the user message of a message that went to the harness.
func (l *live) sent(m *message, mode string) {
	msg := m.text
	if r := l.s.cfg.Redact; r != nil {
		// Masked as the harness's own echo of it is, so the two match.
		msg = string(r.Line([]byte(msg)))
	}
	text, trunc := agentstream.Clip(msg, agentstream.MaxText)
	l.emit(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc, Mode: mode})
	if len(l.echoes) < 16 {
		l.echoes = append(l.echoes, text)
	}
}

// isWork reports whether an event shows the agent at work, which opens a
// turn when none runs.
func isWork(p agentstream.Payload) bool {
	switch p := p.(type) {
	case *agentstream.Message:
		return p.Role == agentstream.RoleAssistant
	case *agentstream.MessageDelta, *agentstream.Thinking, *agentstream.ThinkingDelta,
		*agentstream.ToolCall, *agentstream.ToolResult, *agentstream.ToolOutput,
		*agentstream.Plan, *agentstream.FileChange, *agentstream.PermissionRequest,
		*agentstream.Question:
		return true
	}
	return false
}

func turnStatus(reason string) string {
	switch reason {
	case agentstream.TurnInterrupt:
		return agentstream.StatusCancelled
	case agentstream.TurnError:
		return agentstream.StatusFailed
	}
	return agentstream.StatusSucceeded
}

func turnReason(status string) string {
	switch status {
	case agentstream.StatusCancelled:
		return agentstream.TurnInterrupt
	case agentstream.StatusFailed:
		return agentstream.TurnError
	}
	return agentstream.TurnOK
}

// Line is the runner's Hook: the driver reads the line.
func (l *live) Line(c *runner.Conn, line []byte) {
	if line != nil {
		l.drv.Line(c, line)
	}
	l.checkBudget()
	l.afterChange()
}

// seen notes what the session must know of every envelope recorded.
func (l *live) seen(e *agentstream.Envelope) {
	if e.Seq > 0 {
		l.lastSeq = e.Seq
	}
	l.turn = e.Turn
	p := agentstream.Typed(e.Payload)
	switch p := p.(type) {
	case *agentstream.SessionStarted:
		if p.SessionID != "" {
			l.harnessSession = p.SessionID
		}
	case *agentstream.Usage, *agentstream.SessionUpdated:
		l.folder.Add(p)
		r := l.folder.Recap()
		if r.CostUSD != nil {
			l.cost = l.costBase + *r.CostUSD
		}
		var n int64
		for _, v := range []*int64{r.InputTokens, r.OutputTokens} {
			if v != nil {
				n += *v
			}
		}
		l.tokens = l.tokensBase + n
	}
	l.s.mu.Lock()
	l.s.info.LastSeq, l.s.info.Turn = l.lastSeq, l.turn
	l.s.mu.Unlock()
}

// checkBudget ends a session past its budget.
func (l *live) checkBudget() {
	b := l.s.cfg.Budget
	switch {
	case b.MaxCostUSD > 0 && l.cost > b.MaxCostUSD:
		l.overBudget(fmt.Sprintf("cost %s is over the budget of %s", agentstream.FormatCost(l.cost), agentstream.FormatCost(b.MaxCostUSD)))
	case b.MaxTokens > 0 && l.tokens > b.MaxTokens:
		l.overBudget(fmt.Sprintf("%d tokens are over the budget of %d", l.tokens, b.MaxTokens))
	}
}

// overBudget interrupts the running turn; the session ends with reason
// budget once the turn ended (afterChange).
func (l *live) overBudget(why string) {
	if l.budgetEnd != "" || l.closing {
		return
	}
	l.budgetEnd = why
	if l.turnOpen {
		l.interrupt("budget: " + why)
	}
}

// Ready is the driver's Host: the harness takes messages.
func (l *live) Ready() {
	l.ready = true
}

// TurnEnded is the driver's Host: the harness answered the turn's message.
// The adapter's turn.ended usually closed the turn already.
func (l *live) TurnEnded(status, msg string) {
	if !l.turnOpen {
		return
	}
	l.endTurn(status, msg)
	l.emit(&agentstream.TurnEnded{Turn: l.c.Turn(), Reason: turnReason(status)})
	// The harness answered, without a line the adapter reads as the end
	// of its work (an error response): the session records its report.
	end := &agentstream.SessionEnded{Status: status, Reason: agentstream.ReasonCompletion}
	if status != agentstream.StatusSucceeded {
		end.Error, _ = agentstream.Clip(msg, agentstream.MaxText)
	}
	l.emit(end)
}

// Background is the driver's Host: the harness runs n tasks in the
// background, each of which starts a turn when it ends.
func (l *live) Background(n int) {
	l.background = n
}

// Failed is the driver's Host: the conversation cannot go on.
func (l *live) Failed(err error) {
	if l.failReason == "" {
		l.failReason = err.Error()
	}
	l.c.Stop("", "")
}

// Request is the driver's Host: the harness waits for an answer.
func (l *live) Request(r driver.Request) {
	req := &request{Request: Request{
		ID: r.ID, Aliases: r.Aliases, Kind: r.Kind, Tool: r.Tool, CallID: r.CallID,
		Category: r.Category, Summary: r.Summary, Input: r.Input, Options: r.Options, Since: l.c.Now(),
	}}
	if t, ok := l.tools[r.CallID]; ok {
		if t.category != "" {
			req.Category = t.category
		}
		if t.summary != "" {
			req.Summary = t.summary
		}
	}
	l.requests[r.ID] = req
	for _, a := range r.Aliases {
		l.requests[a] = req
	}
	l.order = append(l.order, req)
	decision, msg := PolicyAsk, ""
	if r.Kind != driver.KindQuestion {
		decision, msg = l.s.cfg.Policy.decide(req.Tool, req.Category, req.Summary)
	}
	switch decision {
	case PolicyAllow:
		l.answerBy(req, driver.Answer{Decision: driver.Allow}, agentstream.ResolvedByPolicy)
	case PolicyDeny:
		if msg == "" {
			msg = "The session's policy denies " + describe(req.Tool, req.Summary) + "."
		}
		l.answerBy(req, driver.Answer{Decision: driver.Deny, Message: msg}, agentstream.ResolvedByPolicy)
	default:
		if d := l.s.cfg.Policy.AskTimeout; d > 0 {
			req.stop = l.c.After(d, func() {
				if l.requests[req.ID] == req {
					msg := "Nobody answered within " + d.String() + ": denied."
					l.answerBy(req, driver.Answer{Decision: driver.Deny, Message: msg}, agentstream.ResolvedByPolicy)
					l.afterChange()
				}
			})
		}
	}
}

// Withdrawn is the driver's Host: the harness no longer waits.
func (l *live) Withdrawn(id string) {
	if r, ok := l.requests[id]; ok {
		l.resolve(r, driver.Resolution{Outcome: agentstream.OutcomeCancelled}, agentstream.ResolvedByHarness)
	}
}

// answer answers a request for a person (or the policy).
func (l *live) answer(id string, a driver.Answer, by string) error {
	r, ok := l.requests[id]
	if !ok {
		if l.answered[id] {
			return fmt.Errorf("%w: %s", ErrAnswered, id)
		}
		return fmt.Errorf("%w: %s", ErrUnknownRequest, id)
	}
	return l.answerBy(r, a, by)
}

func (l *live) answerBy(r *request, a driver.Answer, by string) error {
	res, err := l.drv.Answer(l.c, r.ID, a)
	if errors.Is(err, driver.ErrNoRequest) {
		// The driver no longer holds it: it was withdrawn meanwhile.
		l.resolve(r, driver.Resolution{Outcome: agentstream.OutcomeCancelled}, agentstream.ResolvedByHarness)
		return fmt.Errorf("%w: %s", ErrAnswered, r.ID)
	}
	if err != nil {
		return fmt.Errorf("session: answer %s: %w", r.ID, err)
	}
	l.resolve(r, res, by)
	return nil
}

// resolve records a request's resolution and forgets it.
func (l *live) resolve(r *request, res driver.Resolution, by string) {
	l.emit(&agentstream.RequestResolved{RequestID: r.ID, Outcome: res.Outcome, Answer: res.Answer, Auto: by == agentstream.ResolvedByPolicy, By: by})
	l.forget(r)
}

func (l *live) forget(r *request) {
	if r.stop != nil {
		r.stop()
	}
	for _, id := range append([]string{r.ID}, r.Aliases...) {
		delete(l.requests, id)
		l.answered[id] = true
	}
	for i, o := range l.order {
		if o == r {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
}

// cancelRequests withdraws every pending request from the harness.
func (l *live) cancelRequests() {
	for len(l.order) > 0 {
		r := l.order[0]
		if err := l.answerBy(r, driver.Answer{Decision: driver.Cancel}, agentstream.ResolvedBySession); err != nil && l.requests[r.ID] == r {
			l.resolve(r, driver.Resolution{Outcome: agentstream.OutcomeCancelled}, agentstream.ResolvedBySession)
		}
	}
}

// send takes a message.
func (l *live) send(text, mode string) (string, error) {
	if l.closing || l.c == nil && l.runs > 0 {
		return "", ErrClosed
	}
	if l.caps.Messages == driver.None {
		return "", ErrOneMessage
	}
	m := l.enqueue(text, mode)
	switch {
	case !l.turnOpen:
		l.queue = append(l.queue, m)
		l.accept(m, agentstream.MessageQueued)
	case mode == agentstream.ModeSteer && l.caps.Steer == driver.Native:
		if err := l.drv.Steer(l.c, text); err == nil {
			l.accept(m, agentstream.MessageDelivered)
			l.inTurn = append(l.inTurn, m)
			l.emit(&agentstream.SentStarted{MessageID: m.id, Mode: m.mode, Status: agentstream.MessageRunning})
			l.sent(m, "inject")
			break
		} else {
			m.emulated, m.reason = true, "the steer failed ("+err.Error()+"): the message waits for the turn to end"
			l.queue = append(l.queue, m)
			l.accept(m, agentstream.MessageQueued)
		}
	case mode == agentstream.ModeSteer:
		m.emulated = true
		m.reason = l.protocol() + " cannot take a message into a running turn: it waits for the turn to end"
		l.queue = append(l.queue, m)
		l.accept(m, agentstream.MessageQueued)
	case mode == agentstream.ModeInterrupt:
		if l.caps.Interrupt != driver.Native {
			m.emulated = true
			m.reason = l.protocol() + " cannot interrupt a turn: its harness is stopped"
		}
		l.queue = append([]*message{m}, l.queue...)
		l.accept(m, agentstream.MessageQueued)
		if err := l.interrupt("message " + m.id); err != nil && !errors.Is(err, ErrNotRunning) {
			return m.id, err
		}
	default:
		l.queue = append(l.queue, m)
		l.accept(m, agentstream.MessageQueued)
	}
	return m.id, nil
}

func (l *live) protocol() string {
	if l.c != nil {
		return l.c.Protocol()
	}
	return "the harness"
}

// interrupt ends the running turn.
func (l *live) interrupt(reason string) error {
	if l.c == nil || !l.turnOpen {
		return ErrNotRunning
	}
	if l.interrupting {
		return nil
	}
	switch l.caps.Interrupt {
	case driver.Native:
		l.setState(agentstream.StateInterrupting, reason)
		l.cancelRequests()
		if err := l.drv.Interrupt(l.c); err != nil {
			l.setState(agentstream.StateRunning, "the interrupt failed: "+err.Error())
			return fmt.Errorf("session: interrupt: %w", err)
		}
		l.interrupting = true
		d := l.s.cfg.InterruptTimeout
		l.stopInterrupt = l.c.After(d, func() {
			if l.interrupting && l.turnOpen {
				l.forced = "the turn did not end within " + d.String() + " of the interrupt: the harness was stopped"
				l.c.Stop(agentstream.ReasonAborted, l.forced)
			}
		})
	case driver.Emulated:
		l.interrupting = true
		l.setState(agentstream.StateInterrupting, reason+" (by stopping the harness)")
		l.cancelRequests()
		l.closing, l.closeReason = true, reason+": the harness was stopped"
		l.c.Stop(agentstream.ReasonAborted, "interrupted")
	default:
		return ErrUnsupported
	}
	return nil
}

func (l *live) setMode(mode string) error {
	if l.c == nil {
		return ErrClosed
	}
	if l.caps.Mode != driver.Native {
		return ErrUnsupported
	}
	return l.drv.SetMode(l.c, mode)
}

func (l *live) setModel(model string) error {
	if l.c == nil {
		return ErrClosed
	}
	if l.caps.Model != driver.Native {
		return ErrUnsupported
	}
	return l.drv.SetModel(l.c, model)
}

// close ends the session.
func (l *live) close(reason string) {
	if l.closing && l.stopClose != nil || l.c == nil {
		l.closing = true
		return
	}
	l.closing, l.closeReason = true, reason
	for _, m := range l.queue {
		l.emit(&agentstream.SentCompleted{MessageID: m.id, Mode: m.mode, Status: agentstream.StatusCancelled, Error: "the session closed"})
	}
	l.queue = nil
	l.cancelRequests()
	l.setState(agentstream.StateClosing, reason)
	if l.turnOpen {
		l.c.Stop(agentstream.ReasonAborted, reason)
		return
	}
	if l.drv.Close(l.c) {
		grace := l.s.cfg.Grace
		l.stopClose = l.c.After(grace, func() { l.c.Stop("", "") })
	} else {
		l.stopClose = func() bool { return false }
		l.c.Stop("", "")
	}
}

// End is the runner's Hook: the harness ended.
func (l *live) End(c *runner.Conn, e runner.Ending) {
	for _, stop := range []func() bool{l.stopInterrupt, l.stopClose} {
		if stop != nil {
			stop()
		}
	}
	l.stopInterrupt, l.stopClose = nil, nil
	if l.fallback {
		l.fallTo("quota", l.exh.message, l.exh.resetAt)
		l.c = nil
		l.publish()
		return
	}
	for len(l.order) > 0 {
		l.resolve(l.order[0], driver.Resolution{Outcome: agentstream.OutcomeCancelled}, agentstream.ResolvedBySession)
	}
	why := endText(e)
	midTurn := l.turnOpen
	if midTurn {
		status := agentstream.StatusFailed
		if l.closing || l.forced == "" && e.StopReason == agentstream.ReasonAborted {
			status = agentstream.StatusCancelled
		}
		msg := why
		if l.forced != "" {
			msg = l.forced
		}
		for _, m := range l.inTurn {
			l.emit(&agentstream.SentCompleted{MessageID: m.id, Mode: m.mode, Status: status, Error: msg})
		}
		l.inTurn = nil
		l.turnOpen = false
		l.emit(&agentstream.TurnEnded{Turn: c.Turn(), Reason: turnReason(status)})
	}
	for _, m := range l.queue {
		l.emit(&agentstream.SentCompleted{MessageID: m.id, Mode: m.mode, Status: agentstream.StatusCancelled, Error: "the session ended"})
	}
	l.queue = nil
	switch {
	case l.forced != "":
		l.setState(agentstream.StateFailed, l.forced)
	case l.failReason != "":
		l.setState(agentstream.StateFailed, l.failReason)
		if !e.Completed {
			l.emit(&agentstream.SessionEnded{Status: agentstream.StatusFailed, Reason: agentstream.ReasonCompletion, Error: l.failReason})
			l.endedByHook = true
		}
	case l.closing:
		l.setState(agentstream.StateClosed, l.closeReason)
		if !e.Completed && !l.endedByHook {
			end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonExit}
			if midTurn {
				end = &agentstream.SessionEnded{Status: agentstream.StatusCancelled, Reason: agentstream.ReasonAborted, Error: l.closeReason}
			}
			l.emit(end)
		}
	case e.StopReason == agentstream.ReasonAborted:
		l.setState(agentstream.StateClosed, why)
	case midTurn:
		l.setState(agentstream.StateFailed, "the harness ended mid-turn: "+why)
	case e.StopReason != "":
		l.setState(agentstream.StateFailed, why)
	case e.Exited && e.ExitCode == 0 && e.Signal == 0:
		l.setState(agentstream.StateClosed, "the harness exited")
	default:
		l.setState(agentstream.StateFailed, "the harness ended: "+why)
	}
	l.closing = true
	l.c = nil
	l.publish()
}

// endText says how a harness ended.
func endText(e runner.Ending) string {
	switch {
	case e.StopReason != "" && e.StopDetail != "":
		return e.StopReason + ": " + e.StopDetail
	case e.StopReason != "":
		return e.StopReason
	case e.Signal != 0:
		return "signal: " + e.Signal.String()
	}
	return "exit status " + strconv.Itoa(e.ExitCode)
}

// fallTo records the move to the next candidate.
func (l *live) fallTo(failure, msg, resetAt string) {
	cands := l.s.cfg.Candidates
	from, to := l.candidate, l.candidate+1
	fc, tc := cands[from], cands[to]
	fi, ti := int64(from), int64(to)
	harness := func(c Candidate) string { return harnessOf(c.Protocol) }
	text, _ := agentstream.Clip(msg, agentstream.MaxText)
	if failure == "quota" {
		l.record(&agentstream.Account{Account: fc.Account, Index: &fi, Harness: harness(fc), Model: fc.Model,
			Status: agentstream.AccountExhausted, Env: fc.envNames(), ResetAt: resetAt, Message: text})
	}
	l.record(&agentstream.Fallback{
		From:    &agentstream.FallbackTarget{Index: &fi, Harness: harness(fc), Model: fc.Model},
		To:      &agentstream.FallbackTarget{Index: &ti, Harness: harness(tc), Model: tc.Model},
		Failure: failure, Message: text, ResetAt: resetAt,
	})
	l.resumeNext = ""
	if tc.Protocol == fc.Protocol && l.caps.Resume == driver.Native {
		l.resumeNext = l.harnessSession
	}
	l.candidate, l.next = to, to
	l.owed = append(l.owed, &agentstream.Account{Account: tc.Account, Index: &ti, Harness: harness(tc), Model: tc.Model,
		Status: agentstream.AccountSwitched, Env: tc.envNames()})
	if t, err := time.Parse(time.RFC3339, resetAt); err == nil {
		l.availableAt(from, t)
	}
}

// availability is when an exhausted account resets.
type availability struct {
	index int
	at    time.Time
}

// availableAt records when an exhausted account is available again; each
// run says so at that time, if it still runs then.
func (l *live) availableAt(index int, t time.Time) {
	l.avail = append(l.avail, availability{index: index, at: t})
}

// watchAvailability arranges the account events of the accounts that reset
// while this run goes on.
func (l *live) watchAvailability() {
	for _, a := range l.avail {
		d := a.at.Sub(l.c.Now())
		if d < 0 {
			d = 0
		}
		l.c.After(d, func() {
			for i, x := range l.avail {
				if x == a {
					l.avail = append(l.avail[:i], l.avail[i+1:]...)
					c := l.s.cfg.Candidates[a.index]
					idx := int64(a.index)
					l.emit(&agentstream.Account{Account: c.Account, Index: &idx, Harness: harnessOf(c.Protocol), Model: c.Model,
						Status: agentstream.AccountAvailable, Env: c.envNames(), ResetAt: a.at.UTC().Format(time.RFC3339)})
					l.afterChange()
					return
				}
			}
		})
	}
}

func harnessOf(protocol string) string {
	if p, ok := agentstream.LookupProtocol(protocol); ok {
		return p.Harness
	}
	return ""
}

// fallBack moves to the next candidate when one could not start.
func (l *live) fallBack(msg string) bool {
	if l.candidate+1 >= len(l.s.cfg.Candidates) {
		return false
	}
	l.fallTo("start", msg, "")
	return true
}

// failWithoutHarness ends a session whose next candidate could not start.
func (l *live) failWithoutHarness(err error) {
	l.state, l.stateReason = agentstream.StateFailed, err.Error()
	l.closing = true
}

// publish copies the state into the session's snapshot.
func (l *live) publish() {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	i := &s.info
	i.ID = s.id
	if l.c != nil {
		i.Protocol = l.c.Protocol()
	} else if i.Protocol == "" {
		i.Protocol = s.cfg.Candidates[l.candidate].Protocol
	}
	if p, ok := agentstream.LookupProtocol(i.Protocol); ok {
		i.Harness = p.Harness
	}
	i.State, i.StateReason = l.state, l.stateReason
	i.Caps = l.caps
	i.Pending = i.Pending[:0]
	for _, r := range l.order {
		i.Pending = append(i.Pending, r.Request)
	}
	i.Running = ""
	if len(l.inTurn) > 0 {
		i.Running = l.inTurn[0].id
	}
	i.Queued = i.Queued[:0]
	for _, m := range l.queue {
		i.Queued = append(i.Queued, m.id)
	}
	i.Account, i.Candidate = s.cfg.Candidates[l.candidate].Account, l.candidate
	i.HarnessSession = l.harnessSession
	i.Turn, i.LastSeq = l.turn, l.lastSeq
	i.CostUSD, i.Tokens, i.Turns = l.cost, l.tokens, l.turns
}
