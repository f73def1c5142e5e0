package modelsim

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// A Scenario says, call by call, what the model answers. It is read from a
// JSON file (Decode, Load); its zero value answers nothing.
type Scenario struct {
	// Name is the scenario's name: its file name without ".json".
	Name string `json:"-"`
	// Description says in a sentence what the scenario exercises.
	Description string `json:"description"`
	// Prompt is what the harness is asked to do.
	Prompt string `json:"prompt"`
	// FollowUps are the later user messages of a conversation, for the
	// protocols that hold one (each is sent when the previous turn ended).
	FollowUps []string `json:"followUps,omitempty"`
	// Calls are the main conversation's replies, in order.
	Calls []Call `json:"calls"`
	// Subagent, when set, answers the requests of a subagent the main
	// conversation starts.
	Subagent *Subagent `json:"subagent,omitempty"`
	// Files are what files of the working directory (relative paths) hold
	// once the scenario ran, for the checks of a test.
	Files map[string]string `json:"files,omitempty"`
}

// A Subagent is the script of a subagent's own conversation.
type Subagent struct {
	// Marker is text that only the subagent's prompt holds: a request whose
	// user text contains it belongs to the subagent.
	Marker string `json:"marker"`
	// Calls are the subagent's replies, in order.
	Calls []Call `json:"calls"`
}

// A Call is one answer of the model: an error, or a reply made of thinking,
// text and tool calls. Times repeats it.
type Call struct {
	// If, when set, restricts the call to requests it matches; a request
	// takes the first unused call of its conversation that matches it.
	If *Condition `json:"if,omitempty"`
	// Thinking is the reply's reasoning text.
	Thinking string `json:"thinking,omitempty"`
	// Text is the reply's text.
	Text string `json:"text,omitempty"`
	// Tools are the tool calls of the reply, in order.
	Tools []ToolUse `json:"tools,omitempty"`
	// Error, when set, makes the call an HTTP error instead of a reply.
	Error *APIError `json:"error,omitempty"`
	// DelayMs is how long the server waits before it answers.
	DelayMs int `json:"delayMs,omitempty"`
	// Times is how many requests in a row the call answers (0 means 1).
	Times int `json:"times,omitempty"`
	// Always makes the call answer every request it matches, however many:
	// an error that never lifts.
	Always bool `json:"always,omitempty"`
	// Usage is what the call reports, in agentstream's meaning.
	Usage Usage `json:"usage"`
}

// A Condition restricts a call to the requests it matches. Every set field
// must hold.
type Condition struct {
	// UserText is text the user messages of the request must contain
	// (tool results are not user text).
	UserText string `json:"userText,omitempty"`
	// System is text the system prompt must contain.
	System string `json:"system,omitempty"`
	// ToolResults is the number of tool results the conversation must hold.
	ToolResults *int `json:"toolResults,omitempty"`
}

// Roles a ToolUse can name.
const (
	RoleShell    = "shell"    // runs a command: Command
	RoleEdit     = "edit"     // replaces Old by New in the file at Path
	RoleWrite    = "write"    // writes Content to the file at Path
	RoleRead     = "read"     // reads the file at Path
	RolePlan     = "plan"     // sets the plan to Steps
	RoleSubagent = "subagent" // starts a subagent on Prompt
	// RoleFinish is the role of the call with which a subagent reports its
	// text when its harness wants it through a tool; scenarios do not
	// name it, the server adds it.
	RoleFinish = "finish"
)

var roles = []string{RoleShell, RoleEdit, RoleWrite, RoleRead, RolePlan, RoleSubagent}

// A ToolUse is one tool call of a reply: a role, resolved against the tools
// the request offers, with the role's arguments; or a literal Name and
// Input, sent as written.
type ToolUse struct {
	// Role is one of the Role constants.
	Role string `json:"role,omitempty"`
	// Name and Input are a literal tool call, instead of a role.
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// Command is the shell tool's command.
	Command string `json:"command,omitempty"`
	// Path is the file of the edit, write and read tools, relative to the
	// harness's working directory (the server's Dir) unless absolute.
	Path string `json:"path,omitempty"`
	// Old and New are the edit tool's text to replace and its replacement.
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Content is the write tool's file content.
	Content string `json:"content,omitempty"`
	// Steps are the plan tool's steps.
	Steps []PlanStep `json:"steps,omitempty"`
	// Prompt is the subagent tool's task.
	Prompt string `json:"prompt,omitempty"`
	// Description is a short description, for the tools that take one.
	Description string `json:"description,omitempty"`

	// Expect says what the tool gives back, for the checks of a test.
	Expect ToolExpect `json:"expect"`
}

// ToolExpect is what a tool call is expected to give back when the harness
// runs it.
type ToolExpect struct {
	// Output is text the tool's result contains.
	Output string `json:"output,omitempty"`
	// OutputAny lists texts of which the result contains one (a harness
	// that cuts a long output keeps its head or its tail).
	OutputAny []string `json:"outputAny,omitempty"`
	// IsError says that the tool fails.
	IsError bool `json:"isError,omitempty"`
	// ExitCode is the shell command's exit status, when it is not 0.
	ExitCode int `json:"exitCode,omitempty"`
}

// A PlanStep is one step of a plan.
type PlanStep struct {
	Text string `json:"text"`
	// Status is pending, in_progress or completed.
	Status string `json:"status"`
}

// An APIError is an HTTP error answer.
type APIError struct {
	// Status is the HTTP status, 400 to 599 (429, 529, 503, ...).
	Status int `json:"status"`
	// StatusFor overrides Status for some APIs (an overload is 529 in
	// Anthropic's and 503 in the others).
	StatusFor map[string]int `json:"statusFor,omitempty"`
	// Type is the API's error type; empty means the usual one for the
	// status in the API that is called.
	Type string `json:"type,omitempty"`
	// Message is the error's message, written in the API's error JSON.
	Message string `json:"message"`
	// RetryAfter, when positive, is the retry-after header, in seconds.
	RetryAfter float64 `json:"retryAfter,omitempty"`
	// Body, when set, is sent as the body instead of the API's error JSON.
	Body json.RawMessage `json:"body,omitempty"`
}

// Usage is a call's token counts in agentstream's meaning: Input excludes
// cache reads and writes, Output includes Reasoning.
type Usage struct {
	Input         int64 `json:"input"`
	Output        int64 `json:"output"`
	CacheRead     int64 `json:"cacheRead,omitempty"`
	CacheCreation int64 `json:"cacheCreation,omitempty"`
	Reasoning     int64 `json:"reasoning,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input: u.Input + v.Input, Output: u.Output + v.Output, CacheRead: u.CacheRead + v.CacheRead,
		CacheCreation: u.CacheCreation + v.CacheCreation, Reasoning: u.Reasoning + v.Reasoning,
	}
}

// For returns the error as it is answered in an API: with the status
// StatusFor gives it.
func (e *APIError) For(api string) *APIError {
	out := *e
	if st, ok := e.StatusFor[api]; ok {
		out.Status = st
	}
	out.StatusFor = nil
	return &out
}

// A ScenarioError says why a scenario was refused: the file, the call (1 and
// up; 0 for the scenario as a whole) and the reason.
type ScenarioError struct {
	File string
	// Thread is "" for the main conversation, "subagent" for the subagent's.
	Thread string
	Call   int
	Reason string
}

func (e *ScenarioError) Error() string {
	var b strings.Builder
	b.WriteString("modelsim: scenario ")
	b.WriteString(e.File)
	if e.Thread != "" {
		b.WriteString(": " + e.Thread)
	}
	if e.Call > 0 {
		fmt.Fprintf(&b, ": call %d", e.Call)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// maxScenario bounds the size of a scenario file.
const maxScenario = 8 << 20

// Decode reads a scenario from data; name is the file it came from, whose
// base name without ".json" becomes the scenario's Name. A scenario that
// does not parse or does not hold together is refused with a *ScenarioError.
func Decode(name string, data []byte) (*Scenario, error) {
	file := filepath.Base(name)
	fail := func(call int, format string, a ...any) error {
		return &ScenarioError{File: file, Call: call, Reason: fmt.Sprintf(format, a...)}
	}
	if len(data) > maxScenario {
		return nil, fail(0, "larger than %d bytes", maxScenario)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fail(0, "%s", jsonReason(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(0, "text after the scenario's object")
	}
	s.Name = strings.TrimSuffix(file, ".json")
	if err := s.check(file); err != nil {
		return nil, err
	}
	return &s, nil
}

// jsonReason says where a JSON error is, as line and column.
func jsonReason(data []byte, err error) string {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if off < 0 || off > int64(len(data)) {
		return "not a scenario: " + msg
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("line %d column %d: %s", line, col, msg)
}

// check refuses a scenario that does not hold together.
func (s *Scenario) check(file string) error {
	if len(s.Calls) == 0 {
		return &ScenarioError{File: file, Reason: "no calls"}
	}
	if err := checkCalls(file, "", s.Calls); err != nil {
		return err
	}
	if s.Subagent == nil {
		return nil
	}
	if s.Subagent.Marker == "" {
		return &ScenarioError{File: file, Thread: "subagent", Reason: "no marker"}
	}
	if len(s.Subagent.Calls) == 0 {
		return &ScenarioError{File: file, Thread: "subagent", Reason: "no calls"}
	}
	found := false
	for _, c := range s.Calls {
		for _, t := range c.Tools {
			if t.Role == RoleSubagent && strings.Contains(t.Prompt, s.Subagent.Marker) {
				found = true
			}
		}
	}
	if !found {
		return &ScenarioError{File: file, Thread: "subagent",
			Reason: fmt.Sprintf("marker %q is in no subagent tool's prompt", s.Subagent.Marker)}
	}
	if strings.Contains(s.Prompt, s.Subagent.Marker) {
		return &ScenarioError{File: file, Thread: "subagent",
			Reason: fmt.Sprintf("marker %q is in the main prompt too", s.Subagent.Marker)}
	}
	return checkCalls(file, "subagent", s.Subagent.Calls)
}

func checkCalls(file, thread string, calls []Call) error {
	for i := range calls {
		if reason := calls[i].problem(); reason != "" {
			return &ScenarioError{File: file, Thread: thread, Call: i + 1, Reason: reason}
		}
	}
	return nil
}

// problem says what is wrong with a call, or "".
func (c *Call) problem() string {
	switch {
	case c.Times < 0:
		return "times is negative"
	case c.DelayMs < 0:
		return "delayMs is negative"
	case c.Usage.Input < 0 || c.Usage.Output < 0 || c.Usage.CacheRead < 0 || c.Usage.CacheCreation < 0 || c.Usage.Reasoning < 0:
		return "usage has a negative count"
	case c.Usage.Reasoning > c.Usage.Output:
		return "usage: reasoning exceeds output, which includes it"
	}
	if c.If != nil && c.If.ToolResults != nil && *c.If.ToolResults < 0 {
		return "if.toolResults is negative"
	}
	if c.Error != nil {
		e := c.Error
		switch {
		case c.Text != "" || c.Thinking != "" || len(c.Tools) > 0:
			return "an error call has no text, thinking or tools"
		case e.Status < 400 || e.Status > 599:
			return fmt.Sprintf("error status %d: want 400 to 599", e.Status)
		case e.Message == "" && len(e.Body) == 0:
			return "error has no message"
		case e.RetryAfter < 0:
			return "error retryAfter is negative"
		case len(e.Body) > 0 && !json.Valid(e.Body):
			return "error body is not JSON"
		}
		for api, st := range e.StatusFor {
			switch api {
			case APIAnthropic, APIResponses, APIChat, APIGemini:
			default:
				return fmt.Sprintf("error statusFor: unknown API %q", api)
			}
			if st < 400 || st > 599 {
				return fmt.Sprintf("error statusFor %s: status %d: want 400 to 599", api, st)
			}
		}
		return ""
	}
	if c.Text == "" && c.Thinking == "" && len(c.Tools) == 0 {
		return "no text, thinking, tools or error"
	}
	for j := range c.Tools {
		if reason := c.Tools[j].problem(); reason != "" {
			return fmt.Sprintf("tool %d: %s", j+1, reason)
		}
	}
	return ""
}

func (t *ToolUse) problem() string {
	if t.Name != "" || len(t.Input) > 0 {
		switch {
		case t.Role != "":
			return "a tool has a role or a literal name, not both"
		case t.Name == "":
			return "a literal tool call needs a name"
		case !isObject(t.Input):
			return "a literal tool call's input must be a JSON object"
		}
		return ""
	}
	need := func(what, v string) string {
		if v == "" {
			return fmt.Sprintf("role %s needs %s", t.Role, what)
		}
		return ""
	}
	switch t.Role {
	case "":
		return "no role and no name"
	case RoleShell:
		return need("command", t.Command)
	case RoleEdit:
		if r := need("path", t.Path); r != "" {
			return r
		}
		if t.Old == "" || t.Old == t.New {
			return "role edit needs old text, different from new"
		}
	case RoleWrite:
		return need("path", t.Path)
	case RoleRead:
		return need("path", t.Path)
	case RolePlan:
		if len(t.Steps) == 0 {
			return "role plan needs steps"
		}
		for k, st := range t.Steps {
			if st.Text == "" {
				return fmt.Sprintf("plan step %d has no text", k+1)
			}
			switch st.Status {
			case "pending", "in_progress", "completed":
			default:
				return fmt.Sprintf("plan step %d: status %q: want pending, in_progress or completed", k+1, st.Status)
			}
		}
	case RoleSubagent:
		return need("prompt", t.Prompt)
	default:
		return fmt.Sprintf("role %q: unknown (want one of %s)", t.Role, strings.Join(roles, ", "))
	}
	return ""
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// Load reads a scenario file.
func Load(name string) (*Scenario, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("modelsim: %w", err)
	}
	return Decode(name, data)
}

//go:embed scenarios/*.json
var builtin embed.FS

// Builtin returns the scenarios this package ships with, by name.
func Builtin() ([]*Scenario, error) {
	names, err := builtin.ReadDir("scenarios")
	if err != nil {
		return nil, fmt.Errorf("modelsim: %w", err)
	}
	var out []*Scenario
	for _, n := range names {
		data, err := builtin.ReadFile(path.Join("scenarios", n.Name()))
		if err != nil {
			return nil, fmt.Errorf("modelsim: %w", err)
		}
		s, err := Decode(n.Name(), data)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// LoadNamed reads the scenario file name, or, when no such file exists and
// name is a plain word, the built-in scenario of that name.
func LoadNamed(name string) (*Scenario, error) {
	if _, err := os.Stat(name); err == nil || strings.ContainsAny(name, `/\.`) {
		return Load(name)
	}
	all, err := Builtin()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("modelsim: no scenario file %q and no built-in scenario of that name (built in: %s)", name, strings.Join(names, ", "))
}
