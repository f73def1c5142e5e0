// Package driver speaks the input side of the harnesses' protocols: how a
// message is sent, a turn interrupted, a permission request answered, a mode
// changed, for one protocol each. What a harness prints is the adapters'
// to read (package adapter); a driver reads only what concerns its side of
// the conversation: the responses to what it sent, and the requests the
// harness waits on.
//
// A Driver knows nothing of who talks to the harness. It writes through a
// Conn (the running harness: stdin, and events of its own) and tells a Host
// what the harness said of the conversation (ready, a request pending, a
// turn ended). Package session is the host of live sessions; package runner
// hosts a one-prompt run.
//
// The list of drivers is explicit: For returns the driver of a protocol.
package driver

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentstream/agentstream"
)

// Support says how a driver does one thing.
type Support string

// Kinds of support.
const (
	// Native: the harness does it, through its protocol.
	Native Support = "native"
	// Emulated: the harness cannot, and the session does the nearest thing
	// (a steer is queued; an interrupt stops the process).
	Emulated Support = "emulated"
	// None: it cannot be done.
	None Support = "none"
)

// Caps says what a driver can do.
type Caps struct {
	// Messages is Native when the harness takes message after message,
	// None when it takes one, given when it starts.
	Messages Support `json:"messages"`
	// Steer is adding a message to the running turn.
	Steer Support `json:"steer"`
	// Interrupt is ending the running turn and keeping the conversation.
	Interrupt Support `json:"interrupt"`
	// Permissions is answering the harness's permission requests.
	Permissions Support `json:"permissions"`
	// Questions is answering the questions the agent asks the person.
	Questions Support `json:"questions"`
	// Resume is continuing a conversation the harness had before.
	Resume Support `json:"resume"`
	// Model is changing the model between turns.
	Model Support `json:"model"`
	// Mode is changing the permission mode between turns.
	Mode Support `json:"mode"`
}

// Conn is the running harness as a driver sees it; *runner.Conn is one.
// Its methods never block, and are called from one goroutine at a time.
type Conn interface {
	// Write queues b for the harness's stdin.
	Write(b []byte)
	// CloseInput closes the harness's stdin once what was queued is
	// written.
	CloseInput()
	// Emit records an event the driver wrote itself, after those recorded
	// so far.
	Emit(p agentstream.Payload)
	// Now returns the session's time.
	Now() time.Time
}

// Host is told what the harness says of the conversation. Its methods are
// called from the driver's methods, on the same goroutine, and must not
// call back into the driver before they return.
type Host interface {
	// Ready says the harness takes messages now. It is called once.
	Ready()
	// Request says the harness waits for an answer to r.
	Request(r Request)
	// Withdrawn says the harness no longer waits for the request id.
	Withdrawn(id string)
	// TurnEnded says the harness answered the message that started the
	// turn: status is agentstream.StatusSucceeded, StatusFailed or
	// StatusCancelled, and msg says why when it did not succeed. The
	// adapter's turn.ended usually came first; a host closes a turn once.
	TurnEnded(status, msg string)
	// Failed says the conversation cannot go on (the handshake failed).
	Failed(err error)
	// Background says how many tasks the harness runs in the background
	// whose end starts a turn of the harness's own (a subagent Qwen Code
	// launched in the background): a session that closes once its
	// messages are answered waits for those turns.
	Background(n int)
}

// Kinds of requests.
const (
	KindPermission = "permission" // may the agent use a tool?
	KindQuestion   = "question"   // the agent asks the person something
)

// A Request is something the harness waits on.
type Request struct {
	// ID is the request's id: the requestId of its permission.request (or
	// question) event, which is what answers name.
	ID string
	// Aliases are other ids of the same request: the requestId of a
	// question event the adapter wrote for it under another id.
	Aliases []string
	// Kind is KindPermission or KindQuestion.
	Kind string
	// Tool is the name of the tool the request is about.
	Tool string
	// CallID is the tool call's id, when the harness gave one.
	CallID string
	// Category and Summary describe the call, when the protocol says it
	// (an ACP tool kind and title); a host may know them from the call's
	// tool.call event instead.
	Category, Summary string
	// Input is the tool's arguments as compact JSON, when known.
	Input string
	// Options are the answers the harness offers, when it offers some.
	Options []agentstream.PermissionOption
}

// Decisions of an Answer.
const (
	Allow       = "allow"        // allow this once
	AllowAlways = "allow-always" // allow, and the like from now on
	Deny        = "deny"
	// Cancel withdraws the question from the harness: the turn is being
	// interrupted or the session ends.
	Cancel = "cancel"
)

// An Answer answers a Request.
type Answer struct {
	// Decision is Allow, AllowAlways, Deny or Cancel.
	Decision string
	// Message is why a request is denied, told to the agent.
	Message string
	// Input, when set, replaces the tool's arguments (compact JSON of an
	// object), where the protocol allows it.
	Input string
	// Option, when set, is the harness's own option id to answer with,
	// instead of the one the decision picks.
	Option string
	// Answers are a question's answers: each question's text, and the
	// label (or labels, comma-separated) of the chosen options, or free
	// text.
	Answers map[string]string
}

// Resolution is how a driver answered: an agentstream.Outcome constant and
// what was answered (an option id, a denial's message).
type Resolution struct {
	Outcome string
	Answer  string
}

// Errors of the drivers.
var (
	// ErrUnsupported is returned for something the driver cannot do.
	ErrUnsupported = errors.New("driver: not supported by this protocol")
	// ErrNoRequest is returned by Answer for an id the harness does not
	// wait on.
	ErrNoRequest = errors.New("driver: no such pending request")
	// ErrNotReady is returned by Send before the harness is ready, or
	// while a turn runs.
	ErrNotReady = errors.New("driver: the harness does not take a message now")
)

// A Driver speaks one protocol's input side for one run of a harness. Its
// methods are called from one goroutine at a time (the session's), with the
// Conn of the run, and never block.
type Driver interface {
	// Caps says what the driver can do.
	Caps() Caps
	// Start opens the conversation (a handshake, for protocols that have
	// one) and calls h.Ready once a message can be sent, maybe at once.
	Start(c Conn, h Host)
	// Send starts a turn with a user message.
	Send(c Conn, text string) error
	// Steer adds a user message to the running turn.
	Steer(c Conn, text string) error
	// Interrupt asks the harness to end the running turn.
	Interrupt(c Conn) error
	// Answer answers a request the harness waits on.
	Answer(c Conn, id string, a Answer) (Resolution, error)
	// SetMode changes the permission mode.
	SetMode(c Conn, mode string) error
	// SetModel changes the model.
	SetModel(c Conn, model string) error
	// Line reads one stdout line, after the adapter did, for what concerns
	// the driver. It must not retain line.
	Line(c Conn, line []byte)
	// Close ends the conversation. It reports whether the harness exits
	// by itself afterwards; when not, the host stops it.
	Close(c Conn) (exits bool)
}

// Options configure a driver.
type Options struct {
	// Cwd is the harness's working directory, absolute (ACP sends it).
	Cwd string
	// Resume is the id of a conversation of the harness to continue, or "".
	Resume string
	// Mode is the permission mode to start in, where the protocol takes
	// one (Codex's approval policy: untrusted, on-request, never); empty
	// leaves the harness's own.
	Mode string
	// Model is the model to start on, where the protocol takes one; empty
	// leaves the harness's own.
	Model string
	// ClientName and ClientVersion name this program to protocols that
	// ask (ACP's clientInfo, which agents refuse without a version).
	ClientName, ClientVersion string
}

// For returns the driver of a protocol (an agentstream.Protocol name):
// Claude Code's stream-json with its control protocol for claude-stream,
// the Agent Client Protocol for acp, Codex's app-server for codex-app, and
// a driver of one message for the others.
func For(protocol string, opts Options) (Driver, error) {
	p, ok := agentstream.LookupProtocol(protocol)
	if protocol == "auto" || protocol == "" {
		p, ok = agentstream.Protocol{Name: "auto", Prompt: agentstream.PromptStdin}, true
	}
	if !ok {
		return nil, fmt.Errorf("driver: unknown protocol %q", protocol)
	}
	if opts.ClientName == "" {
		opts.ClientName = "agentstream"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "devel"
	}
	switch p.Prompt {
	case agentstream.PromptStreamJSON:
		return newClaude(opts), nil
	case agentstream.PromptACP:
		return newACP(opts), nil
	case agentstream.PromptCodexApp:
		return newCodexApp(opts), nil
	}
	return newOneShot(p), nil
}
