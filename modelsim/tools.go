package modelsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A SentTool is a tool call the server sent: the role it stood for, the
// tool it was resolved to, and the arguments in that tool's shape.
type SentTool struct {
	// Role is the scenario's role, or "" for a literal call.
	Role string `json:"role,omitempty"`
	// Name is the tool's name as the request offered it.
	Name string `json:"name"`
	// ID is the call's id.
	ID string `json:"id"`
	// Input is the arguments as JSON, or for a freeform tool the JSON
	// string of its text.
	Input json.RawMessage `json:"input"`
	// Custom says the tool is a freeform tool of the Responses API.
	Custom bool `json:"custom,omitempty"`
	// Expect is the scenario's expectation of the tool's result.
	Expect ToolExpect `json:"expect"`
}

// key normalizes a property name for matching: lower case, without "_"
// and "-".
func key(name string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(name))
}

// Property names by what they hold, normalized by key.
var (
	pathKeys     = []string{"filepath", "path", "absolutepath", "file", "filename", "targetfile"}
	oldKeys      = []string{"oldstring", "oldstr", "oldtext", "old", "search"}
	newKeys      = []string{"newstring", "newstr", "newtext", "new", "replacement", "replace"}
	contentKeys  = []string{"content", "contents", "filetext", "newcontent"}
	commandKeys  = []string{"command", "cmd"}
	promptKeys   = []string{"prompt", "task", "objective", "instructions"}
	agentKeys    = []string{"subagenttype", "agenttype", "agent", "agentname", "subagent"}
	stepTextKeys = []string{"content", "step", "description", "text", "title", "subject", "task"}
)

// findProp returns the first property of s whose key is one of keys.
func findProp(s *schema, keys []string) (string, *schema) {
	if s == nil {
		return "", nil
	}
	for _, k := range keys {
		for _, p := range s.props {
			if key(p.name) == k {
				return p.name, p.s
			}
		}
	}
	return "", nil
}

func nameHas(name string, words ...string) bool {
	n := strings.ToLower(name)
	for _, w := range words {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// enumHas returns the enum value of s that matches one of the wanted
// values (compared by key), or "".
func enumHas(s *schema, wanted ...string) string {
	if s == nil {
		return ""
	}
	for _, w := range wanted {
		for _, e := range s.enum {
			if v, ok := e.(string); ok && key(v) == key(w) {
				return v
			}
		}
	}
	return ""
}

// planList returns the property of a plan tool that holds the list of
// steps: an array of objects with a status.
func planList(s *schema) (string, *schema) {
	if s == nil {
		return "", nil
	}
	for _, p := range s.props {
		if p.s != nil && p.s.is("array") && p.s.items != nil && p.s.items.prop("status") != nil {
			return p.name, p.s
		}
	}
	return "", nil
}

// fit scores how well a tool fills a role; 0 means it does not.
func fit(role string, t tool) int {
	s := t.schema
	if t.custom {
		if role == RoleEdit && key(t.name) == "applypatch" {
			return 5
		}
		return 0
	}
	pathName, _ := findProp(s, pathKeys)
	oldName, _ := findProp(s, oldKeys)
	newName, _ := findProp(s, newKeys)
	contentName, _ := findProp(s, contentKeys)
	cmdName, cmd := findProp(s, commandKeys)
	// A "command" with an enum is an editor's sub-command (view, create,
	// str_replace), not a shell command.
	subcommand := cmd != nil && len(cmd.enum) > 0
	score := 0
	switch role {
	case RoleShell:
		if cmdName == "" || subcommand || !(cmd.is("string") || cmd.is("array") || len(cmd.types) == 0) {
			return 0
		}
		score = 10
		if s.isRequired(cmdName) {
			score += 3
		}
		switch key(t.name) {
		case "bash", "shell", "execcommand", "runshellcommand", "execute", "terminal", "runterminalcmd":
			score += 5
		}
		if nameHas(t.name, "bash", "shell", "exec", "command", "terminal") {
			score += 2
		}
		if nameHas(t.name, "background", "monitor", "output", "kill") {
			score -= 8
		}
	case RoleEdit:
		if pathName == "" || oldName == "" || newName == "" {
			return 0
		}
		if subcommand && enumHas(cmd, "str_replace") == "" {
			return 0
		}
		score = 10
		if nameHas(t.name, "edit", "replace") {
			score += 3
		}
	case RoleWrite:
		if pathName == "" || contentName == "" {
			return 0
		}
		if subcommand && enumHas(cmd, "create") == "" {
			return 0
		}
		score = 8
		if oldName == "" {
			score += 2
		}
		if nameHas(t.name, "write", "create") {
			score += 3
		}
	case RoleRead:
		if pathName == "" || contentName != "" || oldName != "" {
			return 0
		}
		if subcommand && enumHas(cmd, "view") == "" {
			return 0
		}
		score = 5
		if nameHas(t.name, "read", "view", "cat") {
			score += 5
		}
		if nameHas(t.name, "write", "edit", "list", "glob", "grep", "search", "many") {
			score -= 4
		}
		if nameHas(t.name, "image", "notebook", "pdf") {
			return 0
		}
	case RolePlan:
		if name, _ := planList(s); name != "" {
			score = 10
		} else if s.prop("subject") != nil && nameHas(t.name, "create") {
			score = 6 // one task per call: a step each
		} else {
			return 0
		}
		if nameHas(t.name, "todo", "plan", "task") {
			score += 3
		}
	case RoleSubagent:
		promptName, _ := findProp(s, promptKeys)
		if promptName == "" {
			return 0
		}
		a, _ := findProp(s, agentKeys)
		if a == "" && !nameHas(t.name, "task", "agent", "delegate") {
			return 0
		}
		score = 5
		if a != "" {
			score += 5
		}
		if d := s.prop("description"); d != nil {
			score += 2
		}
		if nameHas(t.name, "task", "agent", "delegate") {
			score += 3
		}
		if nameHas(t.name, "output", "kill", "list", "resume") {
			score -= 8
		}
	}
	if score < 0 {
		return 0
	}
	return score
}

// resolve returns the offered tool that fills role best.
func resolve(role string, tools []tool) (tool, bool) {
	best, bestScore := tool{}, 0
	for _, t := range tools {
		if sc := fit(role, t); sc > bestScore {
			best, bestScore = t, sc
		}
	}
	return best, bestScore > 0
}

// toolNames lists the offered tools for a message.
func toolNames(tools []tool) string {
	var names []string
	for _, t := range tools {
		names = append(names, t.name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// call builds the tool calls a ToolUse stands for: one, or one per step for
// a plan tool that takes a task at a time. nextID names each call.
func (u *ToolUse) calls(c *conv, dir string, nextID func() string) ([]SentTool, error) {
	tools := c.tools
	if u.Role == "" {
		in := json.RawMessage(compact(u.Input))
		return []SentTool{{Name: u.Name, ID: nextID(), Input: in, Expect: u.Expect}}, nil
	}
	t, ok := resolve(u.Role, tools)
	if !ok {
		return nil, fmt.Errorf("role %s: no offered tool fills it (offered: %s)", u.Role, toolNames(tools))
	}
	if t.custom {
		patch := fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-%s\n+%s\n*** End Patch\n", u.abs(dir), u.Old, u.New)
		in, _ := json.Marshal(patch)
		return []SentTool{{Role: u.Role, Name: t.name, ID: nextID(), Input: in, Custom: true, Expect: u.Expect}}, nil
	}
	if u.Role == RolePlan {
		if name, _ := planList(t.schema); name == "" {
			// One call per step, each creating one task.
			var out []SentTool
			for _, st := range u.Steps {
				in := object(t.schema, func(name string, p *schema) (any, bool) {
					switch key(name) {
					case "subject":
						return st.Text, true
					case "description", "activeform":
						return st.Text, true
					}
					return nil, false
				})
				out = append(out, SentTool{Role: u.Role, Name: t.name, ID: nextID(), Input: in, Expect: u.Expect})
			}
			return out, nil
		}
	}
	in := object(t.schema, func(name string, p *schema) (any, bool) { return u.slot(t, name, p, dir, c.system, c.user) })
	return []SentTool{{Role: u.Role, Name: t.name, ID: nextID(), Input: in, Expect: u.Expect}}, nil
}

// abs is the ToolUse's path, made absolute against dir.
func (u *ToolUse) abs(dir string) string {
	if u.Path == "" || filepath.IsAbs(u.Path) || dir == "" {
		return u.Path
	}
	return filepath.Join(dir, u.Path)
}

// slot returns the value of one property of tool t for the ToolUse, or
// false to leave the property to its default.
func (u *ToolUse) slot(t tool, name string, p *schema, dir, system, user string) (any, bool) {
	k := key(name)
	in := func(keys []string) bool { return contains(keys, k) }
	// An editor's sub-command.
	if in(commandKeys) && p != nil && len(p.enum) > 0 {
		switch u.Role {
		case RoleEdit:
			return enumHas(p, "str_replace"), true
		case RoleWrite:
			return enumHas(p, "create"), true
		case RoleRead:
			return enumHas(p, "view"), true
		}
	}
	switch u.Role {
	case RoleShell:
		switch {
		case in(commandKeys):
			if p.is("array") {
				return []string{"bash", "-lc", u.Command}, true
			}
			return u.Command, true
		case k == "description" || k == "summary":
			if u.Description != "" {
				return u.Description, true
			}
			return "Run the lab command", true
		}
	case RoleEdit, RoleWrite, RoleRead:
		pathName, _ := findProp(t.schema, pathKeys)
		switch {
		case name == pathName:
			return u.abs(dir), true
		case u.Role == RoleEdit && in(oldKeys):
			return u.Old, true
		case u.Role == RoleEdit && in(newKeys):
			return u.New, true
		case u.Role == RoleWrite && in(contentKeys):
			return u.Content, true
		case u.Role == RoleEdit && (k == "instruction" || k == "description"):
			if u.Description != "" {
				return u.Description, true
			}
			return "Replace the lab text", true
		}
	case RolePlan:
		if list, _ := planList(t.schema); name == list {
			return u.planSteps(p.items), true
		}
	case RoleSubagent:
		switch {
		case in(promptKeys):
			return u.Prompt, true
		case k == "description":
			if u.Description != "" {
				return u.Description, true
			}
			return "Lab subagent", true
		case in(agentKeys):
			return agentType(p, t.description+"\n"+system+"\n"+user), true
		case k == "name":
			return "lab-subagent", true
		}
	}
	return nil, false
}

// planSteps fills a plan tool's list in the shape of its items.
func (u *ToolUse) planSteps(item *schema) []any {
	textName, _ := findProp(item, stepTextKeys)
	status := item.prop("status")
	var out []any
	for i, st := range u.Steps {
		v := object(item, func(name string, p *schema) (any, bool) {
			switch k := key(name); {
			case name == textName:
				return st.Text, true
			case k == "status":
				return planStatus(status, st.Status), true
			case k == "activeform":
				return st.Text, true
			case k == "id":
				if p.is("integer") || p.is("number") {
					return i + 1, true
				}
				return strconv.Itoa(i + 1), true
			case k == "priority":
				if e := enumHas(p, "medium"); e != "" || len(p.enum) == 0 {
					return cmpOr(e, "medium"), true
				}
			}
			return nil, false
		})
		out = append(out, v)
	}
	return out
}

// planStatus maps a scenario status to a plan tool's own word for it.
func planStatus(s *schema, status string) string {
	synonyms := map[string][]string{
		"pending":     {"pending", "todo", "not_started", "open"},
		"in_progress": {"in_progress", "active", "doing", "started", "running"},
		"completed":   {"completed", "done", "complete", "finished"},
	}
	if e := enumHas(s, synonyms[status]...); e != "" {
		return e
	}
	return status
}

// agentType picks the subagent type: the general-purpose one of the enum,
// or the one the tool's description, the system prompt or the user text
// (where some harnesses list their agents) names, else the first the enum
// offers.
func agentType(p *schema, context string) string {
	general := []string{"general-purpose", "generalist", "general", "worker"}
	if e := enumHas(p, append(general, "default")...); e != "" {
		return e
	}
	if p != nil && len(p.enum) > 0 {
		if v, ok := p.enum[0].(string); ok {
			return v
		}
	}
	if p != nil {
		context = p.description + "\n" + context
	}
	// An agent listed by name: <name>X</name>, **X**, or a "- X:" item.
	for _, name := range general {
		if strings.Contains(context, "<name>"+name+"</name>") || strings.Contains(context, "**"+name+"**") ||
			strings.Contains(context, "- "+name+":") {
			return name
		}
	}
	for _, name := range general {
		if strings.Contains(context, name) {
			return name
		}
	}
	return "general-purpose"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// object builds a JSON object in the order of s's properties: each from
// value, or for a required property that value leaves out, the schema's
// default.
func object(s *schema, value func(name string, p *schema) (any, bool)) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	if s != nil {
		for _, p := range s.props {
			v, ok := value(p.name, p.s)
			if !ok {
				if !s.isRequired(p.name) {
					continue
				}
				v = zero(p.s)
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			k, _ := json.Marshal(p.name)
			b.Write(k)
			b.WriteByte(':')
			if raw, ok := v.(json.RawMessage); ok {
				b.Write(raw)
				continue
			}
			enc, err := json.Marshal(v)
			if err != nil {
				enc = []byte("null")
			}
			b.Write(enc)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// zero is a schema's simplest valid value: an enum's first value, false, 0,
// "", an empty array, or an object of its required properties.
func zero(s *schema) any {
	if s == nil {
		return ""
	}
	if len(s.enum) > 0 {
		return s.enum[0]
	}
	switch {
	case s.is("object"):
		return object(s, func(string, *schema) (any, bool) { return nil, false })
	case s.is("array"):
		return []any{}
	case s.is("boolean"):
		return false
	case s.is("integer"), s.is("number"):
		return 0
	}
	return ""
}

// instance is a value of a structured-output schema, for the side calls
// that ask for JSON: every property filled, strings with a short word.
func instance(s *schema) json.RawMessage {
	if s == nil {
		return json.RawMessage(`{}`)
	}
	var v any
	switch {
	case len(s.enum) > 0:
		v = s.enum[0]
	case s.is("object") || len(s.props) > 0:
		return object(s, func(_ string, p *schema) (any, bool) { return instance(p), true })
	case s.is("array"):
		return json.RawMessage(`[]`)
	case s.is("boolean"):
		v = false
	case s.is("integer"), s.is("number"):
		v = 1 // scores and counts often start at 1
	default:
		v = "modelsim"
	}
	b, _ := json.Marshal(v)
	return b
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
