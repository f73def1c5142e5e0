package codex

import (
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Claims reports whether the first non-blank lines of a stream are Codex
// output: the first JSON object decides. It is an exec --json event
// (thread.*, turn.*, item.*, session.created), a legacy {"id","msg"} event,
// or one of the two lines a legacy exec printed first (the config summary
// and {"prompt":…}). A top-level error line, which other dialects share,
// decides nothing.
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		switch claim(l) {
		case yes:
			return true
		case no:
			return false
		}
	}
	return false
}

type verdict int

const (
	undecided verdict = iota
	yes
	no
)

func claim(l []byte) verdict {
	obj, ok := jsonscan.Object(l)
	if !ok {
		return undecided
	}
	var typ, msg, id, prompt []byte
	config, others := 0, 0
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "type":
			typ = v
		case "msg":
			msg = v
		case "id":
			id = v
		case "prompt":
			prompt = v
		case "model", "provider", "sandbox", "approval", "workdir", "reasoning effort", "reasoning summaries":
			config++
		default:
			others++
		}
	}
	if !obj.Complete() {
		return undecided
	}
	if len(typ) > 0 {
		t := fields.Str(typ)
		switch t {
		case "thread.started", "session.created", "turn.started", "turn.completed", "turn.failed",
			"item.started", "item.updated", "item.completed", "item.plan.delta", "request_user_input":
			return yes
		case "error":
			if config+others <= 2 {
				return undecided
			}
		}
		return no
	}
	switch {
	case len(msg) > 0 && msg[0] == '{' && len(id) > 0 && len(jsonscan.Get(msg, "type")) > 0:
		return yes
	case len(prompt) > 0 && prompt[0] == '"' && config == 0 && others == 0 && len(id) == 0:
		return yes
	case config >= 2 && others == 0 && len(id) == 0 && len(prompt) == 0 && len(msg) == 0:
		return yes
	}
	return no
}
