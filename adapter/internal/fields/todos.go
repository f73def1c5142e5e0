package fields

import (
	"strconv"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// TodoPlan reads the array under "todos" in a todo tool's input as a plan:
// each element's textKey is a step's text and its "status" goes through
// status (KnownStatus when nil). It returns nil when there is no such array.
func TodoPlan(input []byte, textKey string, status func(string) string) *agentstream.Plan {
	arr, ok := jsonscan.Array(jsonscan.Get(input, "todos"))
	if !ok {
		return nil
	}
	if status == nil {
		status = KnownStatus
	}
	p := &agentstream.Plan{Steps: []agentstream.PlanStep{}}
	for arr.Next() {
		e := arr.Value()
		text, _, _ := Text(jsonscan.Get(e, textKey))
		p.Steps = append(p.Steps, agentstream.PlanStep{Text: text, Status: status(Str(jsonscan.Get(e, "status")))})
	}
	return p
}

// KnownStatus keeps a plan step status of the vocabulary and makes any
// other one pending.
func KnownStatus(s string) string {
	switch s {
	case agentstream.StepPending, agentstream.StepInProgress, agentstream.StepCompleted, agentstream.StepCancelled:
		return s
	}
	return agentstream.StepPending
}

// TodoSummary is the safe summary of a todo tool call: how many todos its
// input's "todos" array holds ("1 todo", "3 todos").
func TodoSummary(input []byte) string {
	n := 0
	arr, ok := jsonscan.Array(jsonscan.Get(input, "todos"))
	for ok && arr.Next() {
		n++
	}
	if n == 1 {
		return "1 todo"
	}
	return strconv.Itoa(n) + " todos"
}
