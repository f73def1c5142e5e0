package adapter_test

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/agentstreamtest"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated table of docs/harnesses.md")

// harnessNotes says, per protocol, how the harness reports usage and what is
// known to be missing. The event types come from running the adapter.
var harnessNotes = map[string][2]string{
	"claude-json":      {"per call on assistant lines (once per message id; with partial messages the final `message_delta` figures), the process's running total with cost on `result`; in a transcript, the process's cost and duration (no tokens) on `cost-state`", "subagent text needs `--forward-subagent-text`; its own title only via the transcript probe (else the first prompt)"},
	"qwen-json":        {"per call, on one of the lines of a response (the others report zeros), input including cache reads (converted); total on `result`", "no cost"},
	"amp-json":         {"per message, Anthropic-shaped, as Claude", "`result` carries no usage or cost"},
	"codex-json":       {"the thread's running total on `turn.completed` (session, input converted to non-cached); legacy streams: per request and total on `token_count`", "no per-call usage in `exec --json`; no cost"},
	"gemini-json":      {"one total per process on `result.stats` (session), input including cache (split)", "thinking tokens are not in the output count; no cost"},
	"opencode-json":    {"per step on `step_finish` (call) with cost", "`step_finish` can be lost at exit: the runner then ends the session"},
	"cursor-json":      {"one total per run on `result.usage` (session); none in 2025 builds", "failures may print only to stderr; no cost"},
	"copilot-json":     {"output tokens per message (call, input unknown); premium requests per run (session)", "no input or cache tokens; auth failures are plain text"},
	"droid-json":       {"one aggregate per run on `completion.usage` (session)", "no cost; older builds print no usage"},
	"acp":              {"`usage_update`: context occupancy and cumulative cost (session, never summed); the prompt response's usage (session)", "tool names are ACP kinds; the runner speaks the handshake"},
	"codex-rollout":    {"per call (`last_token_usage`) and the thread's running total (`total_token_usage`) on `token_count`, input converted to non-cached", "a session file, read by `import`; the model comes in `session.updated`; `apply_patch` changes only from the patch (no lab recording yet); no cost"},
	"gemini-chat":      {"per call on each model message's `tokens` (once per message id), input less cached plus the tool-use prompt, output with the thoughts", "a session file, read by `import`; no version or cwd in it; the model comes in `session.updated`; no cost"},
	"opencode-storage": {"per step on each `step-finish` part (call) with cost, once per part id", "a session's records in opencode's database or its older JSON files, read by `import --local`; the older files' layout has no lab recording"},
	"kimi-json":        {"none on stdout", "only documentation examples recorded; no end line (the runner ends the session)"},
	"pi-json":          {"per call on each assistant `message_end`, with cost", "only hand-built recordings; the model only on usage"},
}

// TestHarnessDoc keeps the table of docs/harnesses.md in step with the
// adapters: for each dialect, the event types its adapter produces on the
// recorded corpus and its fixtures.
func TestHarnessDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString("| protocol | harness | event types produced on the recorded corpus | usage as reported | known gaps |\n|---|---|---|---|---|\n")
	for _, a := range adapter.All() {
		notes, ok := harnessNotes[a.Name]
		if !ok {
			continue
		}
		types := map[string]bool{}
		for _, f := range recorded(t, a.Name) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := agentstreamtest.Normalize(a, bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
				env, err := agentstream.ParseEnvelope(line)
				if err == nil {
					types[env.Type()] = true
				}
			}
		}
		var list []string
		for _, typ := range agentstream.Types() {
			if types[typ] {
				list = append(list, "`"+typ+"`")
			}
		}
		b.WriteString("| `" + a.Name + "` | " + a.Harness + " | " + strings.Join(list, " ") + " | " + notes[0] + " | " + notes[1] + " |\n")
	}
	for p := range harnessNotes {
		if _, err := adapter.Lookup(p); err != nil {
			t.Errorf("notes for unknown protocol %s", p)
		}
	}
	checkDocTable(t, "table", b.String())
}

// TestHarnessDocLists keeps the lists of docs/harnesses.md in step with the
// adapters: the native line types each leaves raw on purpose
// (Adapter.Deliberate) and those whose lines may give no event of their own
// (Adapter.Folded), with the reasons.
func TestHarnessDocLists(t *testing.T) {
	var b strings.Builder
	b.WriteString("| protocol | native line type | raw on purpose, or folded into | why |\n|---|---|---|---|\n")
	seen := map[string]bool{}
	for _, a := range adapter.All() {
		for _, list := range []struct {
			what string
			m    map[string]string
		}{{"raw on purpose", a.Deliberate}, {"folded", a.Folded}} {
			keys := slices.Sorted(maps.Keys(list.m))
			for _, k := range keys {
				key := fmt.Sprintf("%p/%s/%s", list.m, list.what, k)
				if seen[key] {
					continue
				}
				seen[key] = true
				names := a.Name
				for _, o := range adapter.All() {
					m := o.Deliberate
					if list.what == "folded" {
						m = o.Folded
					}
					if o.Name != a.Name && len(m) > 0 && fmt.Sprintf("%p", m) == fmt.Sprintf("%p", list.m) {
						names += ", " + o.Name
					}
				}
				fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", names, k, list.what, list.m[k])
			}
		}
	}
	checkDocTable(t, "lists", b.String())
}

// checkDocTable compares a generated part of docs/harnesses.md, between its
// markers, with want, and rewrites it under -update-docs.
func checkDocTable(t *testing.T, name, want string) {
	t.Helper()
	const path = "../docs/harnesses.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+": generated by adapter/harnesses_test.go -->\n", "<!-- end of "+name+" -->"
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %s markers", path, name)
	}
	got := string(doc[i+len(begin) : j])
	if got == want {
		return
	}
	if *updateDocs {
		out := slices.Concat(doc[:i+len(begin)], []byte(want), doc[j:])
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date with the adapters; run go test ./adapter -run TestHarnessDoc -update-docs\nwant:\n%s", path, want)
}
