package agentstream

// The payloads of a live conversation: the state of a session that someone
// talks to, the lifecycle of each message sent to it, and the accounts it
// runs on. Agentstream writes them itself (source null); no harness prints
// them.

// States of a live session (session.state).
const (
	// StateIdle: no turn runs; the session takes a message.
	StateIdle = "idle"
	// StateRunning: a turn runs.
	StateRunning = "running"
	// StateInterrupting: the turn was asked to stop and has not yet.
	StateInterrupting = "interrupting"
	// StateClosing: the session was asked to end (or hit its budget) and
	// its harness is being stopped.
	StateClosing = "closing"
	// StateClosed: the session ended; its harness is gone.
	StateClosed = "closed"
	// StateFailed: the session ended because its harness failed (it died
	// mid-turn, broke its protocol, or ignored an interrupt).
	StateFailed = "failed"
)

// SessionState is the payload of session.state: the session moved from
// Previous (empty for the first state) to State, for Reason.
type SessionState struct {
	State    string `json:"state"`
	Previous string `json:"previous"`
	Reason   string `json:"reason"`
}

// Type returns "session.state".
func (*SessionState) Type() string { return TypeSessionState }

// AppendJSON appends the payload's JSON object to b.
func (p *SessionState) AppendJSON(b []byte) []byte {
	b = append(b, `{"state":`...)
	b = appendOptStr(b, p.State)
	b = append(b, `,"previous":`...)
	b = appendOptStr(b, p.Previous)
	b = append(b, `,"reason":`...)
	b = appendOptStr(b, p.Reason)
	return append(b, '}')
}

// Modes of a sent message.
const (
	// ModeQueue: the message waits for the current turn to end.
	ModeQueue = "queue"
	// ModeSteer: the message goes into the running turn.
	ModeSteer = "steer"
	// ModeInterrupt: the running turn is stopped, then the message is sent.
	ModeInterrupt = "interrupt"
)

// Statuses of a sent message (message.accepted, message.started), besides
// MessageQueued (accepted, waiting for its turn) and the session statuses
// succeeded, failed and cancelled of message.completed.
const (
	// MessageDelivered: accepted and written to the harness at once (a
	// steer into the running turn).
	MessageDelivered = "delivered"
	// MessageRunning: the turn carrying the message runs.
	MessageRunning = "running"
)

// SentAccepted is the payload of message.accepted: the session took a
// message. Mode is the mode it was sent with; Emulated is true when the
// harness cannot do that mode itself and the session does it another way,
// which Reason then says (a steer the harness cannot take is queued).
type SentAccepted struct {
	MessageID string `json:"messageId"`
	Mode      string `json:"mode"`
	Status    string `json:"status"`
	Emulated  bool   `json:"emulated"`
	Reason    string `json:"reason"`
}

// Type returns "message.accepted".
func (*SentAccepted) Type() string { return TypeMessageAccepted }

// AppendJSON appends the payload's JSON object to b.
func (p *SentAccepted) AppendJSON(b []byte) []byte {
	b = append(b, `{"messageId":`...)
	b = appendOptStr(b, p.MessageID)
	b = append(b, `,"mode":`...)
	b = appendOptStr(b, p.Mode)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"emulated":`...)
	b = appendBool(b, p.Emulated)
	b = append(b, `,"reason":`...)
	b = appendOptStr(b, p.Reason)
	return append(b, '}')
}

// SentStarted is the payload of message.started: the message reached
// the harness and the turn that carries it runs.
type SentStarted struct {
	MessageID string `json:"messageId"`
	Mode      string `json:"mode"`
	Status    string `json:"status"`
}

// Type returns "message.started".
func (*SentStarted) Type() string { return TypeMessageStarted }

// AppendJSON appends the payload's JSON object to b.
func (p *SentStarted) AppendJSON(b []byte) []byte {
	b = append(b, `{"messageId":`...)
	b = appendOptStr(b, p.MessageID)
	b = append(b, `,"mode":`...)
	b = appendOptStr(b, p.Mode)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	return append(b, '}')
}

// SentCompleted is the payload of message.completed: the turn that
// carried the message ended (status succeeded, failed or cancelled), or the
// message never reached the harness (cancelled, with Error saying why).
type SentCompleted struct {
	MessageID string `json:"messageId"`
	Mode      string `json:"mode"`
	Status    string `json:"status"`
	Error     string `json:"error"`
}

// Type returns "message.completed".
func (*SentCompleted) Type() string { return TypeMessageCompleted }

// AppendJSON appends the payload's JSON object to b.
func (p *SentCompleted) AppendJSON(b []byte) []byte {
	b = append(b, `{"messageId":`...)
	b = appendOptStr(b, p.MessageID)
	b = append(b, `,"mode":`...)
	b = appendOptStr(b, p.Mode)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"error":`...)
	b = appendOptStr(b, p.Error)
	return append(b, '}')
}

// Account statuses (account).
const (
	// AccountSwitched: the session runs on this account from now on.
	AccountSwitched = "switched"
	// AccountExhausted: the account hit its quota or ran out of credit.
	AccountExhausted = "exhausted"
	// AccountAvailable: an exhausted account's reset time passed.
	AccountAvailable = "available"
)

// Account is the payload of account: what happened to one of a session's
// accounts. Account is the account's name and Index its place among the
// session's candidates; Env lists the names of the environment variables
// that hold its credentials (never their values). ResetAt (RFC 3339) is
// when an exhausted account is expected to work again.
type Account struct {
	Account string   `json:"account"`
	Index   *int64   `json:"index"`
	Harness string   `json:"harness"`
	Model   string   `json:"model"`
	Status  string   `json:"status"`
	Env     []string `json:"env"`
	ResetAt string   `json:"resetAt"`
	Message string   `json:"message"`
}

// Type returns "account".
func (*Account) Type() string { return TypeAccount }

// AppendJSON appends the payload's JSON object to b.
func (p *Account) AppendJSON(b []byte) []byte {
	b = append(b, `{"account":`...)
	b = appendOptStr(b, p.Account)
	b = append(b, `,"index":`...)
	b = appendOptInt(b, p.Index)
	b = append(b, `,"harness":`...)
	b = appendOptStr(b, p.Harness)
	b = append(b, `,"model":`...)
	b = appendOptStr(b, p.Model)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"env":`...)
	b = appendStrings(b, p.Env)
	b = append(b, `,"resetAt":`...)
	b = appendOptStr(b, p.ResetAt)
	b = append(b, `,"message":`...)
	b = appendOptStr(b, p.Message)
	return append(b, '}')
}
