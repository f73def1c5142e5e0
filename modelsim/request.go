package modelsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// APIs the server speaks, as Record.API names them.
const (
	APIAnthropic = "anthropic" // Anthropic Messages
	APIResponses = "responses" // OpenAI Responses
	APIChat      = "chat"      // OpenAI Chat Completions
	APIGemini    = "gemini"    // Gemini generateContent
)

// conv is what the server reads from a request: the tools it offers and the
// parts of the conversation a scenario's conditions look at.
type conv struct {
	model  string
	stream bool
	system string
	tools  []tool
	// user is the user-authored text of the conversation (tool results
	// excluded), one message a line.
	user        string
	toolResults int
	// schema is the structured output the request asks for, when it asks
	// for JSON (a router or check call); wantJSON is set with or without one.
	schema   *schema
	wantJSON bool
	// includeUsage is Chat Completions' stream_options.include_usage.
	includeUsage bool
	// forced says the request makes the model call a tool (tool_choice
	// required, or a named tool).
	forced bool
}

// tool is a tool the request offers.
type tool struct {
	name        string
	description string
	schema      *schema
	// custom is a freeform (grammar) tool of the Responses API, whose input
	// is text rather than JSON.
	custom bool
}

// schema is the part of a JSON schema the server reads. Properties keep
// their order.
type schema struct {
	types       []string
	props       []prop
	required    []string
	items       *schema
	enum        []any
	description string
}

type prop struct {
	name string
	s    *schema
}

func (s *schema) prop(name string) *schema {
	if s == nil {
		return nil
	}
	for _, p := range s.props {
		if p.name == name {
			return p.s
		}
	}
	return nil
}

func (s *schema) isRequired(name string) bool {
	if s == nil {
		return false
	}
	for _, r := range s.required {
		if r == name {
			return true
		}
	}
	return false
}

func (s *schema) is(typ string) bool {
	if s == nil {
		return false
	}
	for _, t := range s.types {
		if t == typ {
			return true
		}
	}
	return false
}

// parseSchema reads a JSON schema; it never fails, an unreadable part is
// left out. Gemini's upper-case type names are read as the lower-case ones.
func parseSchema(raw json.RawMessage) *schema {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var in struct {
		Type        json.RawMessage   `json:"type"`
		Properties  json.RawMessage   `json:"properties"`
		Required    []string          `json:"required"`
		Items       json.RawMessage   `json:"items"`
		Enum        []any             `json:"enum"`
		Description string            `json:"description"`
		AnyOf       []json.RawMessage `json:"anyOf"`
		OneOf       []json.RawMessage `json:"oneOf"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return nil
	}
	s := &schema{required: in.Required, enum: in.Enum, description: in.Description}
	var one string
	var many []string
	if json.Unmarshal(in.Type, &one) == nil && one != "" {
		s.types = []string{strings.ToLower(one)}
	} else if json.Unmarshal(in.Type, &many) == nil {
		for _, t := range many {
			s.types = append(s.types, strings.ToLower(t))
		}
	}
	for _, alt := range append(in.AnyOf, in.OneOf...) {
		if a := parseSchema(alt); a != nil {
			s.types = append(s.types, a.types...)
			if s.items == nil {
				s.items = a.items
			}
			if len(s.props) == 0 {
				s.props, s.required = a.props, a.required
			}
		}
	}
	if len(in.Properties) > 0 {
		for _, kv := range orderedMembers(in.Properties) {
			s.props = append(s.props, prop{name: kv.key, s: parseSchema(kv.value)})
		}
		if len(s.types) == 0 {
			s.types = []string{"object"}
		}
	}
	if len(in.Items) > 0 {
		s.items = parseSchema(in.Items)
	}
	return s
}

type member struct {
	key   string
	value json.RawMessage
}

// orderedMembers returns the members of a JSON object in their order.
func orderedMembers(raw json.RawMessage) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return out
		}
		out = append(out, member{key, v})
	}
	return out
}

// text reads a content value that is a string, or an array of parts whose
// text parts are joined; parts of other types are skipped.
func text(raw json.RawMessage, textTypes ...string) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b []string
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if len(textTypes) == 0 || p.Type == "" || contains(textTypes, p.Type) {
			b = append(b, p.Text)
		}
	}
	return strings.Join(b, "\n")
}

// forcedChoice reports whether a tool_choice makes the model call a tool:
// "required" or "any", or a named tool.
func forcedChoice(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s == "required" || s == "any"
	}
	var o struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Type == "function" || o.Type == "tool" || o.Type == "any"
	}
	return false
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func joinLines(parts ...string) string {
	var b []string
	for _, p := range parts {
		if p != "" {
			b = append(b, p)
		}
	}
	return strings.Join(b, "\n")
}

// parseAnthropic reads a Messages request.
func parseAnthropic(body []byte) (*conv, error) {
	var in struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		OutputFormat *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"output_format"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("messages request: %w", err)
	}
	c := &conv{model: in.Model, stream: in.Stream, system: text(in.System), forced: forcedChoice(in.ToolChoice)}
	for _, t := range in.Tools {
		if len(t.InputSchema) == 0 {
			continue // a server tool (web search, ...): nothing to call
		}
		c.tools = append(c.tools, tool{name: t.Name, description: t.Description, schema: parseSchema(t.InputSchema)})
	}
	for _, m := range in.Messages {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					c.toolResults++
				}
			}
		}
		if m.Role == "user" {
			c.user = joinLines(c.user, text(m.Content, "text"))
		}
	}
	if in.OutputFormat != nil {
		c.wantJSON, c.schema = true, parseSchema(in.OutputFormat.Schema)
	}
	return c, nil
}

// parseChat reads a Chat Completions request.
func parseChat(body []byte) (*conv, error) {
	var in struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("chat completions request: %w", err)
	}
	c := &conv{model: in.Model, stream: in.Stream, forced: forcedChoice(in.ToolChoice)}
	if in.StreamOptions != nil {
		c.includeUsage = in.StreamOptions.IncludeUsage
	}
	for _, t := range in.Tools {
		if t.Function.Name == "" {
			continue
		}
		c.tools = append(c.tools, tool{name: t.Function.Name, description: t.Function.Description, schema: parseSchema(t.Function.Parameters)})
	}
	for _, m := range in.Messages {
		switch m.Role {
		case "system", "developer":
			c.system = joinLines(c.system, text(m.Content))
		case "user":
			c.user = joinLines(c.user, text(m.Content))
		case "tool":
			c.toolResults++
		}
	}
	if f := in.ResponseFormat; f != nil && (f.Type == "json_schema" || f.Type == "json_object") {
		c.wantJSON = true
		if f.JSONSchema != nil {
			c.schema = parseSchema(f.JSONSchema.Schema)
		}
	}
	return c, nil
}

// parseResponses reads a Responses request.
func parseResponses(body []byte) (*conv, error) {
	var in struct {
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        []struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"tools"`
		Text *struct {
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"text"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	c := &conv{model: in.Model, stream: in.Stream, system: in.Instructions}
	for _, t := range in.Tools {
		switch t.Type {
		case "function":
			c.tools = append(c.tools, tool{name: t.Name, description: t.Description, schema: parseSchema(t.Parameters)})
		case "custom":
			c.tools = append(c.tools, tool{name: t.Name, description: t.Description, custom: true})
		}
	}
	var s string
	if len(in.Input) == 0 {
		// no input: nothing said yet
	} else if json.Unmarshal(in.Input, &s) == nil {
		c.user = s
	} else {
		var items []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(in.Input, &items); err != nil {
			return nil, fmt.Errorf("responses request: input: %w", err)
		}
		for _, it := range items {
			switch {
			case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
				c.toolResults++
			case (it.Type == "" || it.Type == "message") && it.Role == "user":
				c.user = joinLines(c.user, text(it.Content, "input_text", "text"))
			case (it.Type == "" || it.Type == "message") && (it.Role == "system" || it.Role == "developer"):
				c.system = joinLines(c.system, text(it.Content, "input_text", "text"))
			}
		}
	}
	if in.Text != nil && in.Text.Format != nil && in.Text.Format.Type == "json_schema" {
		c.wantJSON, c.schema = true, parseSchema(in.Text.Format.Schema)
	}
	return c, nil
}

// parseGemini reads a generateContent request; the model comes from the
// path.
func parseGemini(body []byte, model string, stream bool) (*conv, error) {
	type part struct {
		Text             string          `json:"text"`
		Thought          bool            `json:"thought"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
	}
	type content struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	type decl struct {
		Name                 string          `json:"name"`
		Description          string          `json:"description"`
		Parameters           json.RawMessage `json:"parameters"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	}
	type genConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	}
	var in struct {
		Contents          []content `json:"contents"`
		SystemInstruction *content  `json:"systemInstruction"`
		Tools             []struct {
			FunctionDeclarations []decl `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig *genConfig `json:"generationConfig"`
		// The CLI's own code assist shape wraps the request.
		Request json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("generateContent request: %w", err)
	}
	c := &conv{model: model, stream: stream}
	if in.SystemInstruction != nil {
		for _, p := range in.SystemInstruction.Parts {
			c.system = joinLines(c.system, p.Text)
		}
	}
	for _, t := range in.Tools {
		for _, d := range t.FunctionDeclarations {
			params := d.ParametersJSONSchema
			if len(params) == 0 {
				params = d.Parameters
			}
			c.tools = append(c.tools, tool{name: d.Name, description: d.Description, schema: parseSchema(params)})
		}
	}
	for _, ct := range in.Contents {
		for _, p := range ct.Parts {
			if len(p.FunctionResponse) > 0 {
				c.toolResults++
			} else if ct.Role == "user" && !p.Thought {
				c.user = joinLines(c.user, p.Text)
			}
		}
	}
	if g := in.GenerationConfig; g != nil {
		sch := g.ResponseJSONSchema
		if len(sch) == 0 {
			sch = g.ResponseSchema
		}
		if len(sch) > 0 || g.ResponseMimeType == "application/json" {
			c.wantJSON, c.schema = true, parseSchema(sch)
		}
	}
	return c, nil
}
