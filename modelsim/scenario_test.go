package modelsim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltin(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"badrequest", "bigoutput", "conversation", "edit", "exhausted", "overloaded",
		"plan", "ratelimit", "shell", "subagent", "text", "toolfail"}
	var got []string
	for _, s := range all {
		got = append(got, s.Name)
		if s.Description == "" || s.Prompt == "" {
			t.Errorf("%s: no description or prompt", s.Name)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("built-in scenarios: got %v, want %v", got, want)
	}
}

func TestLoadNamed(t *testing.T) {
	s, err := LoadNamed("shell")
	if err != nil || s.Name != "shell" {
		t.Fatalf("LoadNamed(shell) = %v, %v", s, err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(file, []byte(`{"prompt":"p","calls":[{"text":"t"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadNamed(file); err != nil || s.Name != "mine" {
		t.Fatalf("LoadNamed(file) = %v, %v", s, err)
	}
	if _, err := LoadNamed("nosuch"); err == nil || !strings.Contains(err.Error(), "built in: badrequest") {
		t.Errorf("LoadNamed(nosuch) = %v, want the list of built-in scenarios", err)
	}
}

// TestDecodeRefuses checks that a scenario that does not parse or does not
// hold together is refused with the file, the call and the reason.
func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"syntax", "{\n \"calls\": [\n  {\"text\": }]}", "modelsim: scenario bad.json: line 3 column 13: invalid character '}'"},
		{"unknown key", `{"calls":[{"txt":"x"}]}`, `unknown field "txt"`},
		{"wrong type", `{"calls":[{"text":1}]}`, "line 1 column 20: cannot unmarshal number"},
		{"trailing", `{"calls":[{"text":"x"}]} {}`, "text after the scenario's object"},
		{"no calls", `{"prompt":"p"}`, "bad.json: no calls"},
		{"empty call", `{"calls":[{"text":"x"},{}]}`, "bad.json: call 2: no text, thinking, tools or error"},
		{"unknown role", `{"calls":[{"tools":[{"role":"shel","command":"x"}]}]}`, `call 1: tool 1: role "shel": unknown (want one of shell, edit, write, read, plan, subagent)`},
		{"shell without command", `{"calls":[{"tools":[{"role":"shell"}]}]}`, "call 1: tool 1: role shell needs command"},
		{"edit same text", `{"calls":[{"tools":[{"role":"edit","path":"f","old":"a","new":"a"}]}]}`, "role edit needs old text, different from new"},
		{"plan status", `{"calls":[{"tools":[{"role":"plan","steps":[{"text":"a","status":"done"}]}]}]}`, `plan step 1: status "done"`},
		{"role and name", `{"calls":[{"tools":[{"role":"shell","command":"x","name":"Bash"}]}]}`, "a role or a literal name, not both"},
		{"literal input", `{"calls":[{"tools":[{"name":"Bash","input":[1]}]}]}`, "input must be a JSON object"},
		{"error and text", `{"calls":[{"text":"x","error":{"status":429,"message":"m"}}]}`, "an error call has no text"},
		{"error status", `{"calls":[{"error":{"status":200,"message":"m"}}]}`, "call 1: error status 200: want 400 to 599"},
		{"error no message", `{"calls":[{"error":{"status":500}}]}`, "error has no message"},
		{"error statusFor", `{"calls":[{"error":{"status":529,"message":"m","statusFor":{"bedrock":503}}}]}`, `unknown API "bedrock"`},
		{"negative usage", `{"calls":[{"text":"x","usage":{"input":-1,"output":0}}]}`, "usage has a negative count"},
		{"reasoning over output", `{"calls":[{"text":"x","usage":{"input":1,"output":2,"reasoning":3}}]}`, "reasoning exceeds output"},
		{"subagent no marker", `{"calls":[{"text":"x"}],"subagent":{"calls":[{"text":"y"}]}}`, "bad.json: subagent: no marker"},
		{"subagent marker unused", `{"calls":[{"text":"x"}],"subagent":{"marker":"m","calls":[{"text":"y"}]}}`, `marker "m" is in no subagent tool's prompt`},
		{"subagent call", `{"calls":[{"tools":[{"role":"subagent","prompt":"m"}]}],"subagent":{"marker":"m","calls":[{"times":-1,"text":"y"}]}}`, "bad.json: subagent: call 1: times is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("dir/bad.json", []byte(tt.data))
			var se *ScenarioError
			if !errors.As(err, &se) {
				t.Fatalf("Decode = %v, want a *ScenarioError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode error = %q, want it to contain %q", err, tt.want)
			}
			if se.File != "bad.json" {
				t.Errorf("error names file %q, want bad.json", se.File)
			}
		})
	}
}

// FuzzDecode checks that no input makes the decoder panic, and that what it
// accepts it accepts again.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("scenarios/*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"calls":[{"tools":[{"name":"x","input":{}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode("fuzz.json", data)
		if err != nil {
			var se *ScenarioError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *ScenarioError", err)
			}
			return
		}
		if len(s.Calls) == 0 {
			t.Fatal("accepted a scenario without calls")
		}
	})
}
