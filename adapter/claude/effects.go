package claude

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// The effects of a tool call (a file it changed, the plan it wrote, the end
// of the subagent it ran) are known only from its result: a call the
// harness rejected or that failed has none. The call keeps what its effect
// needs until then.

// pendingEdit is what an edit tool's input says it changes.
type pendingEdit struct {
	kind     editKind
	path     string
	frags    []filediff.Fragment // editReplace, editMulti
	content  string              // editWrite
	tooLarge bool                // the texts were not kept
}

// maxPendingEdits bounds how many edits awaiting their result keep their
// texts; the others give a file.change without a diff, marked truncated.
const maxPendingEdits = 16

// pendingEdit reads the change an edit tool's input describes, or nil for a
// tool that edits nothing.
func (d *Decoder) pendingEdit(kind editKind, input []byte) *pendingEdit {
	if kind == noEdit {
		return nil
	}
	e := &pendingEdit{kind: kind, path: fields.Str(firstOf(input, pathKeys...))}
	if len(input) > filediff.MaxInput || d.edits >= maxPendingEdits {
		e.tooLarge = true
		return e
	}
	switch kind {
	case editReplace:
		e.frags = []filediff.Fragment{fragment(input)}
	case editMulti:
		arr, _ := jsonscan.Array(jsonscan.Get(input, "edits"))
		for arr.Next() {
			e.frags = append(e.frags, fragment(arr.Value()))
		}
	case editWrite:
		e.content = fields.Str(jsonscan.Get(input, "content"))
	}
	d.edits++
	return e
}

func fragment(v []byte) filediff.Fragment {
	return filediff.Fragment{
		Old: fields.Str(firstOf(v, "old_string", "old_str")),
		New: fields.Str(firstOf(v, "new_string", "new_str")),
	}
}

// pendingPlan is the change a plan tool's input makes to the plan.
type pendingPlan struct {
	kind           planKind
	todos          *agentstream.Plan // planTodos: the whole plan
	id, text, stat string            // planCreate, planUpdate
}

func pendingPlanOf(kind planKind, input []byte) *pendingPlan {
	switch kind {
	case planTodos:
		p := fields.TodoPlan(input, "content", nil)
		if p == nil {
			return nil
		}
		return &pendingPlan{kind: kind, todos: p}
	case planCreate, planUpdate:
		p := &pendingPlan{kind: kind, stat: fields.Str(jsonscan.Get(input, "status"))}
		p.id = fields.Str(jsonscan.Get(input, "taskId"))
		if p.id == "" {
			if n := fields.Int(jsonscan.Get(input, "taskId")); n != nil {
				p.id = strconv.FormatInt(*n, 10)
			}
		}
		p.text, _, _ = fields.Text(jsonscan.Get(input, "subject"))
		return p
	}
	return nil
}

// planTask is one task of the plan the Task tools build.
type planTask struct {
	id, text, status string
}

// afterResult appends the effects of a call once its result r came: the
// file.change of an edit, the plan of a plan tool, the end of a subagent
// (unless it runs in the background, whose end a task notification says).
// A result that is an error has no effect but a subagent's failure.
func (d *Decoder) afterResult(dst []agentstream.Event, r resultSeen, f *fieldsOf) []agentstream.Event {
	info, ok := d.tools[r.callID]
	if !ok {
		return dst
	}
	// The structured result belongs to the line's call only when the line
	// answers one call.
	var tur toolUseResult
	if len(f.results) == 1 {
		tur = f.tur
	}
	if info.edit != nil {
		if !info.edit.tooLarge {
			d.edits--
		}
		if !r.isError {
			dst = append(dst, agentstream.E(d.fileChange(r, info.edit, tur)))
		}
		info.edit = nil
	}
	if info.plan != nil && !r.isError {
		if p := d.applyPlan(info.plan, r, tur); p != nil {
			dst = append(dst, agentstream.E(p))
		}
	}
	info.plan = nil
	if info.subagent {
		switch {
		case !r.isError && (fields.Bool(tur.isAsync) || fields.Str(tur.status) == "async_launched" ||
			strings.HasPrefix(r.output, "Async agent launched")):
			d.async[r.callID] = true
		default:
			status := agentstream.SubagentFinished
			if r.isError {
				status = agentstream.SubagentFailed
			}
			dst = append(dst, agentstream.E(&agentstream.Subagent{ID: r.callID, CallID: r.callID, Status: status}))
		}
	}
	d.tools[r.callID] = info
	return dst
}

// fileChange is the file.change of a successful edit: from the patch the
// harness printed in its structured result when it did, else from the
// call's texts.
func (d *Decoder) fileChange(r resultSeen, e *pendingEdit, tur toolUseResult) *agentstream.FileChange {
	fc := &agentstream.FileChange{CallID: r.callID}
	kind := agentstream.ChangeModify
	if e.kind == editWrite {
		switch t := fields.Str(tur.typ); {
		case t == "create":
			kind = agentstream.ChangeAdd
		case t == "" && strings.Contains(strings.ToLower(fields.Summary(r.output)), "created"):
			kind = agentstream.ChangeAdd
		}
	}
	var item agentstream.FileChangeItem
	var trunc bool
	hunks := patchHunks(tur.patch)
	switch {
	case len(hunks) > 0:
		item, trunc = filediff.Hunks(e.path, kind, hunks)
	case e.tooLarge:
		item, trunc = agentstream.FileChangeItem{Path: e.path, Kind: kind}, true
	case e.kind == editWrite:
		// The old content of a file written over is not known: the new
		// content shows as added.
		item, trunc = filediff.Texts(e.path, kind, "", e.content)
	default:
		item, trunc = filediff.Fragments(e.path, e.frags)
	}
	fc.Changes = []agentstream.FileChangeItem{item}
	fc.Truncated = trunc
	return fc
}

// patchHunks reads a structuredPatch: an array of hunks {oldStart,
// oldLines, newStart, newLines, lines}.
func patchHunks(v []byte) []filediff.Hunk {
	arr, ok := jsonscan.Array(v)
	if !ok {
		return nil
	}
	var hunks []filediff.Hunk
	for arr.Next() {
		e := arr.Value()
		n := func(k string) int {
			if p := fields.Int(jsonscan.Get(e, k)); p != nil {
				return int(*p)
			}
			return 0
		}
		h := filediff.Hunk{OldStart: n("oldStart"), OldLines: n("oldLines"), NewStart: n("newStart"), NewLines: n("newLines")}
		lines, _ := jsonscan.Array(jsonscan.Get(e, "lines"))
		for lines.Next() {
			h.Lines = append(h.Lines, fields.Str(lines.Value()))
		}
		hunks = append(hunks, h)
	}
	return hunks
}

// applyPlan changes the plan as a successful plan call did and returns the
// plan as it stands.
func (d *Decoder) applyPlan(p *pendingPlan, r resultSeen, tur toolUseResult) *agentstream.Plan {
	switch p.kind {
	case planTodos:
		return p.todos
	case planCreate:
		id := fields.Str(tur.taskID)
		if id == "" {
			id = taskNumber(r.output)
		}
		if id == "" {
			id = strconv.Itoa(len(d.tasks) + 1)
		}
		status := fields.KnownStatus(p.stat)
		d.tasks = append(d.tasks, planTask{id: id, text: p.text, status: status})
	case planUpdate:
		i := d.taskIndex(p.id)
		if i < 0 {
			text := p.text
			if text == "" {
				text = "task " + p.id
			}
			d.tasks = append(d.tasks, planTask{id: p.id, text: text, status: agentstream.StepPending})
			i = len(d.tasks) - 1
		}
		if p.stat == "deleted" {
			d.tasks = append(d.tasks[:i], d.tasks[i+1:]...)
			break
		}
		if p.text != "" {
			d.tasks[i].text = p.text
		}
		if p.stat != "" {
			d.tasks[i].status = fields.KnownStatus(p.stat)
		}
	}
	plan := &agentstream.Plan{Steps: make([]agentstream.PlanStep, 0, len(d.tasks))}
	for _, t := range d.tasks {
		plan.Steps = append(plan.Steps, agentstream.PlanStep{Text: t.text, Status: t.status})
	}
	return plan
}

func (d *Decoder) taskIndex(id string) int {
	for i, t := range d.tasks {
		if t.id == id {
			return i
		}
	}
	return -1
}

// taskNumber reads the task id of TaskCreate's result text, "Task #1
// created successfully: …".
func taskNumber(s string) string {
	_, rest, ok := strings.Cut(s, "#")
	if !ok {
		return ""
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return rest[:n]
}

// taskEnded appends the end of a subagent that ran in the background, when
// the task that ran it ended (task_notification, or task_updated with a
// final status).
func (d *Decoder) taskEnded(dst []agentstream.Event, b *agentstream.SessionBackground) []agentstream.Event {
	callID := b.CallID
	if callID == "" {
		callID = d.taskCall[b.TaskID]
	}
	if callID == "" || !d.async[callID] {
		return dst
	}
	var status string
	switch b.Status {
	case "completed":
		status = agentstream.SubagentFinished
	case "failed", "stopped":
		status = agentstream.SubagentFailed
	default:
		return dst
	}
	delete(d.async, callID)
	return append(dst, agentstream.E(&agentstream.Subagent{ID: callID, CallID: callID, Status: status}))
}
