package modelsim

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// loadTools reads the tools a harness offered in a recorded request
// (testdata/tools/<harness>.json: the request's API and its tools array).
func loadTools(t *testing.T, harness string) *conv {
	t.Helper()
	b, err := os.ReadFile("testdata/tools/" + harness + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		API   string          `json:"api"`
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"tools": f.Tools})
	var c *conv
	switch f.API {
	case APIAnthropic:
		c, err = parseAnthropic(body)
	case APIChat:
		c, err = parseChat(body)
	case APIResponses:
		c, err = parseResponses(body)
	case APIGemini:
		c, err = parseGemini(body, "m", true)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRoles resolves each role against the tools real harnesses offered and
// checks the tool and the arguments, which follow that tool's schema.
func TestRoles(t *testing.T) {
	uses := map[string]ToolUse{
		RoleShell:    {Role: RoleShell, Command: "echo x"},
		RoleEdit:     {Role: RoleEdit, Path: "f.txt", Old: "a", New: "b"},
		RoleWrite:    {Role: RoleWrite, Path: "f.txt", Content: "c\n"},
		RoleRead:     {Role: RoleRead, Path: "/abs/f.txt"},
		RolePlan:     {Role: RolePlan, Steps: []PlanStep{{"one", "completed"}, {"two", "pending"}}},
		RoleSubagent: {Role: RoleSubagent, Prompt: "do it"},
	}
	none := "" // no offered tool fills the role
	tests := []struct {
		harness, system string
		want            map[string]string // role: "Name Input" or none
	}{
		{"claude", "", map[string]string{
			RoleShell:    `Bash {"command":"echo x","description":"Run the lab command"}`,
			RoleEdit:     `Edit {"file_path":"/w/f.txt","old_string":"a","new_string":"b"}`,
			RoleWrite:    `Write {"file_path":"/w/f.txt","content":"c\n"}`,
			RoleRead:     `Read {"file_path":"/abs/f.txt"}`,
			RolePlan:     none,
			RoleSubagent: `Agent {"description":"Lab subagent","prompt":"do it","subagent_type":"general-purpose"}`,
		}},
		{"codex", "", map[string]string{
			RoleShell: `exec_command {"cmd":"echo x"}`,
			RoleEdit:  none, RoleWrite: none, RoleRead: none, RolePlan: none, RoleSubagent: none,
		}},
		{"gemini", "<available_subagents><subagent><name>generalist</name></subagent></available_subagents>", map[string]string{
			RoleShell:    `run_shell_command {"command":"echo x","description":"Run the lab command"}`,
			RoleEdit:     `replace {"file_path":"/w/f.txt","instruction":"Replace the lab text","old_string":"a","new_string":"b"}`,
			RoleWrite:    `write_file {"file_path":"/w/f.txt","content":"c\n"}`,
			RoleRead:     `read_file {"file_path":"/abs/f.txt"}`,
			RolePlan:     none,
			RoleSubagent: `invoke_agent {"agent_name":"generalist","prompt":"do it"}`,
		}},
		{"qwen", "", map[string]string{
			RoleShell:    `run_shell_command {"command":"echo x","description":"Run the lab command"}`,
			RoleEdit:     `edit {"file_path":"/w/f.txt","old_string":"a","new_string":"b"}`,
			RoleWrite:    `write_file {"file_path":"/w/f.txt","content":"c\n"}`,
			RoleRead:     `read_file {"file_path":"/abs/f.txt"}`,
			RolePlan:     none,
			RoleSubagent: `agent {"description":"Lab subagent","prompt":"do it","subagent_type":"general-purpose"}`,
		}},
		{"opencode", "", map[string]string{
			RoleShell:    `bash {"command":"echo x"}`,
			RoleEdit:     `edit {"filePath":"/w/f.txt","oldString":"a","newString":"b"}`,
			RoleWrite:    `write {"content":"c\n","filePath":"/w/f.txt"}`,
			RoleRead:     `read {"filePath":"/abs/f.txt"}`,
			RolePlan:     `todowrite {"todos":[{"content":"one","status":"completed","priority":"medium"},{"content":"two","status":"pending","priority":"medium"}]}`,
			RoleSubagent: `task {"description":"Lab subagent","prompt":"do it","subagent_type":"general"}`,
		}},
		{"copilot", "", map[string]string{
			RoleShell:    `bash {"command":"echo x","description":"Run the lab command"}`,
			RoleEdit:     `edit {"path":"/w/f.txt","old_str":"a","new_str":"b"}`,
			RoleWrite:    `create {"path":"/w/f.txt","file_text":"c\n"}`,
			RoleRead:     `view {"path":"/abs/f.txt"}`,
			RolePlan:     none,
			RoleSubagent: `task {"description":"Lab subagent","prompt":"do it","agent_type":"general-purpose","name":"lab-subagent"}`,
		}},
		{"droid", "", map[string]string{
			RoleShell:    `Execute {"summary":"Run the lab command","command":"echo x"}`,
			RoleEdit:     `Edit {"file_path":"/w/f.txt","old_str":"a","new_str":"b"}`,
			RoleWrite:    `Create {"file_path":"/w/f.txt","content":"c\n"}`,
			RoleRead:     `Read {"file_path":"/abs/f.txt"}`,
			RolePlan:     none,
			RoleSubagent: `Task {"subagent_type":"general-purpose","description":"Lab subagent","prompt":"do it"}`,
		}},
	}
	for _, tt := range tests {
		c := loadTools(t, tt.harness)
		c.system = tt.system
		for _, role := range roles {
			t.Run(tt.harness+"/"+role, func(t *testing.T) {
				u := uses[role]
				n := 0
				sent, err := u.calls(c, "/w", func() string { n++; return fmt.Sprint("id", n) })
				want := tt.want[role]
				if want == none {
					if err == nil || !strings.Contains(err.Error(), "role "+role+": no offered tool fills it (offered: ") {
						t.Fatalf("calls = %v, %v; want no tool to fill the role", sent, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(sent) != 1 {
					t.Fatalf("got %d calls, want 1", len(sent))
				}
				got := sent[0].Name + " " + string(sent[0].Input)
				if got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
				if sent[0].ID != "id1" || sent[0].Role != role {
					t.Errorf("id %q role %q, want id1 and %s", sent[0].ID, sent[0].Role, role)
				}
			})
		}
	}
}

// TestPlanOneTaskACall checks a plan tool that creates one task per call:
// the plan becomes a call per step.
func TestPlanOneTaskACall(t *testing.T) {
	body := `{"tools":[{"name":"TaskCreate","description":"Create a task","input_schema":{"type":"object",
		"properties":{"subject":{"type":"string"},"description":{"type":"string"},"activeForm":{"type":"string"}},
		"required":["subject","description"]}}]}`
	c, err := parseAnthropic([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	u := ToolUse{Role: RolePlan, Steps: []PlanStep{{"one", "completed"}, {"two", "pending"}}}
	n := 0
	sent, err := u.calls(c, "", func() string { n++; return fmt.Sprint(n) })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sent {
		got = append(got, s.Name+" "+string(s.Input))
	}
	want := []string{
		`TaskCreate {"subject":"one","description":"one","activeForm":"one"}`,
		`TaskCreate {"subject":"two","description":"two","activeForm":"two"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestInstance(t *testing.T) {
	// Gemini CLI's router asks for this shape.
	s := parseSchema(json.RawMessage(`{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},
		"complexity_score":{"type":"INTEGER"},"model":{"type":"STRING","enum":["flash","pro"]},
		"tags":{"type":"ARRAY","items":{"type":"STRING"}},"ok":{"type":"BOOLEAN"}},"required":["complexity_score"]}`))
	got := string(instance(s))
	want := `{"complexity_reasoning":"modelsim","complexity_score":1,"model":"flash","tags":[],"ok":false}`
	if got != want {
		t.Errorf("instance = %s, want %s", got, want)
	}
}
