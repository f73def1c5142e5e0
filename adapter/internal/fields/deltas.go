package fields

import "github.com/agentstream/agentstream"

// deltaSlab is how many delta payloads Deltas allocates at once.
const deltaSlab = 64

// Deltas hands out delta payloads from slabs: deltas are the most frequent
// events, and one allocation for many is cheaper. A payload a consumer
// keeps holds its slab, a few kilobytes. The zero value is ready.
type Deltas struct {
	messages []agentstream.MessageDelta
	thoughts []agentstream.ThinkingDelta
}

// Message returns a message.delta payload.
func (d *Deltas) Message(role, text string) *agentstream.MessageDelta {
	if len(d.messages) == cap(d.messages) {
		d.messages = make([]agentstream.MessageDelta, 0, deltaSlab)
	}
	d.messages = append(d.messages, agentstream.MessageDelta{Role: role, Text: text})
	return &d.messages[len(d.messages)-1]
}

// Thinking returns a thinking.delta payload.
func (d *Deltas) Thinking(text string) *agentstream.ThinkingDelta {
	if len(d.thoughts) == cap(d.thoughts) {
		d.thoughts = make([]agentstream.ThinkingDelta, 0, deltaSlab)
	}
	d.thoughts = append(d.thoughts, agentstream.ThinkingDelta{Text: text})
	return &d.thoughts[len(d.thoughts)-1]
}
