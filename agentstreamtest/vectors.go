package agentstreamtest

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/agentstream/agentstream"
)

// ContainsPayload reports whether evs holds an event of type typ whose
// payload has every key of the JSON object want with an equal value, as the
// format's conformance vectors require (other keys may be present).
func ContainsPayload(evs []agentstream.Event, typ, want string) bool {
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return false
	}
	for _, e := range evs {
		if e.Type() != typ {
			continue
		}
		var g map[string]any
		if err := json.Unmarshal(e.Payload.AppendJSON(nil), &g); err != nil {
			continue
		}
		ok := true
		for k, v := range w {
			gv, present := g[k]
			if !present || !reflect.DeepEqual(gv, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Describe renders events one per line, type then payload, for failure
// messages.
func Describe(evs []agentstream.Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Type())
		b.WriteByte(' ')
		b.Write(e.Payload.AppendJSON(nil))
		b.WriteByte('\n')
	}
	return b.String()
}
