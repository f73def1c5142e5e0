package driver

import "github.com/agentstream/agentstream"

// oneShot drives the protocols of one prompt (claude-json, codex-json,
// gemini-json, ...): the message goes on stdin as text, or was put on the
// command line before the harness started, and the harness ends when its
// turn does. Nothing else can be said to it; an interrupt is the host's to
// emulate, by stopping the process.
type oneShot struct {
	p    agentstream.Protocol
	sent bool
}

func newOneShot(p agentstream.Protocol) *oneShot { return &oneShot{p: p} }

func (d *oneShot) Caps() Caps {
	return Caps{Messages: None, Steer: None, Interrupt: Emulated, Permissions: None,
		Questions: None, Resume: None, Model: None, Mode: None}
}

func (d *oneShot) Start(c Conn, h Host) { h.Ready() }

// Send writes the message on stdin and closes it, for the protocols that
// read their prompt there; a protocol that takes it as an argument got it on
// its command line.
func (d *oneShot) Send(c Conn, text string) error {
	if d.sent {
		return ErrUnsupported
	}
	d.sent = true
	if d.p.Prompt == agentstream.PromptStdin {
		c.Write([]byte(text))
	}
	c.CloseInput()
	return nil
}

func (d *oneShot) Steer(Conn, string) error { return ErrUnsupported }
func (d *oneShot) Interrupt(Conn) error     { return ErrUnsupported }
func (d *oneShot) Answer(Conn, string, Answer) (Resolution, error) {
	return Resolution{}, ErrNoRequest
}
func (d *oneShot) SetMode(Conn, string) error  { return ErrUnsupported }
func (d *oneShot) SetModel(Conn, string) error { return ErrUnsupported }
func (d *oneShot) Line(Conn, []byte)           {}

func (d *oneShot) Close(c Conn) bool {
	c.CloseInput()
	return true
}
