package agentstream

import (
	"bufio"
	"strings"

	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Ways a harness takes its prompt.
const (
	// PromptStdin: the prompt is written on stdin as text, then stdin closes.
	PromptStdin = "stdin"
	// PromptStreamJSON: the prompt is a stream-json user message on stdin,
	// which stays open for later turns.
	PromptStreamJSON = "stdin-stream-json"
	// PromptArgument: the prompt is appended to the command as an argument.
	PromptArgument = "argument"
	// PromptACP: the runner speaks the Agent Client Protocol on stdio.
	PromptACP = "acp"
	// PromptCodexApp: the session speaks Codex's app-server protocol
	// (JSON-RPC threads and turns) on stdio.
	PromptCodexApp = "codex-app-server"
)

// Protocol describes a dialect plus the way its harness is driven.
type Protocol struct {
	// Name is the protocol's name, such as "claude-json".
	Name string
	// Harness is the envelope's harness for this protocol, until the stream
	// names its own.
	Harness string
	// Description says in a few words what speaks it.
	Description string
	// Flags are what ApplyProtocol appends to a command.
	Flags []string
	// Prompt is how the prompt is given: PromptStdin, PromptStreamJSON,
	// PromptArgument or PromptACP.
	Prompt string
	// StdinArg is an argument appended after the flags when the prompt goes
	// on stdin and the harness must be told so (Codex reads "-").
	StdinArg string
	// PromptFlag, for a prompt given as an argument, is the flag whose
	// value it must be (Copilot CLI's -p), which no other flag may follow.
	PromptFlag string
	// ExplicitTurns is true when the dialect marks turn starts itself.
	ExplicitTurns bool
}

// protocols is the table of SPEC §2, in the order they are listed.
var protocols = []Protocol{
	{Name: "none", Harness: "shell", Description: "any program; stdout is prose", Prompt: PromptStdin},
	{Name: "claude-json", Harness: "claude-code", Description: "Claude Code, one-shot `claude -p`",
		Flags: []string{"--output-format", "stream-json", "--verbose"}, Prompt: PromptStdin},
	{Name: "claude-stream", Harness: "claude-code", Description: "Claude Code, interactive stream-json on stdin",
		Flags: []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}, Prompt: PromptStreamJSON},
	{Name: "jsonl", Harness: "jsonl", Description: "a harness that already speaks this vocabulary", Prompt: PromptStdin, ExplicitTurns: true},
	{Name: "codex-json", Harness: "codex", Description: "Codex `codex exec --json` (and legacy {id,msg} lines)",
		Flags: []string{"--json"}, Prompt: PromptStdin, StdinArg: "-", ExplicitTurns: true},
	{Name: "gemini-json", Harness: "gemini-cli", Description: "Gemini CLI `gemini --output-format stream-json`",
		Flags: []string{"--output-format", "stream-json"}, Prompt: PromptStdin},
	{Name: "qwen-json", Harness: "qwen-code", Description: "Qwen Code `qwen -p --output-format stream-json`",
		Flags: []string{"--output-format", "stream-json"}, Prompt: PromptStdin},
	{Name: "opencode-json", Harness: "opencode", Description: "opencode `opencode run --format json`",
		Flags: []string{"--format", "json"}, Prompt: PromptArgument},
	{Name: "cursor-json", Harness: "cursor-agent", Description: "Cursor `cursor-agent -p --output-format stream-json`",
		Flags: []string{"--output-format", "stream-json"}, Prompt: PromptArgument},
	{Name: "amp-json", Harness: "amp", Description: "Amp `amp -x --stream-json`",
		Flags: []string{"--stream-json"}, Prompt: PromptStdin},
	{Name: "copilot-json", Harness: "copilot-cli", Description: "GitHub Copilot CLI `copilot -p --output-format json`",
		Flags: []string{"--output-format", "json"}, Prompt: PromptArgument, PromptFlag: "-p"},
	{Name: "droid-json", Harness: "droid", Description: "Factory `droid exec --output-format stream-json`",
		Flags: []string{"--output-format", "stream-json"}, Prompt: PromptArgument},
	{Name: "acp", Harness: "acp", Description: "any Agent Client Protocol agent over stdio", Prompt: PromptACP, ExplicitTurns: true},
	{Name: "codex-app", Harness: "codex", Description: "Codex `codex app-server`, JSON-RPC threads and turns on stdio (a live session's)",
		Flags: []string{"app-server"}, Prompt: PromptCodexApp, ExplicitTurns: true},
	{Name: "codex-rollout", Harness: "codex", Description: "Codex's session rollout files (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), for import", ExplicitTurns: true},
	{Name: "opencode-storage", Harness: "opencode", Description: "opencode's stored sessions (opencode.db, or the older storage/ JSON files), one record a line, for import", ExplicitTurns: true},
	{Name: "qwen-chat", Harness: "qwen-code", Description: "Qwen Code's chat files (~/.qwen/projects/*/chats/*.jsonl), for import", ExplicitTurns: true},
	{Name: "droid-session", Harness: "droid", Description: "Factory Droid's session files (~/.factory/sessions/*/*.jsonl, with the settings file beside each), for import", ExplicitTurns: true},
	{Name: "gemini-chat", Harness: "gemini-cli", Description: "Gemini CLI's chat files (~/.gemini/tmp/*/chats/*.json or .jsonl), for import", ExplicitTurns: true},
	{Name: "kimi-json", Harness: "kimi", Description: "Kimi CLI `kimi --print --output-format stream-json`",
		Flags: []string{"--print", "--output-format", "stream-json"}, Prompt: PromptStdin},
	{Name: "pi-json", Harness: "pi", Description: "pi coding agent `pi --print --mode json`",
		Flags: []string{"--print", "--mode", "json"}, Prompt: PromptArgument, ExplicitTurns: true},
}

// Protocols returns every protocol, in the order of the format's table.
func Protocols() []Protocol {
	out := make([]Protocol, len(protocols))
	copy(out, protocols)
	return out
}

// LookupProtocol returns the protocol called name.
func LookupProtocol(name string) (Protocol, bool) {
	for _, p := range protocols {
		if p.Name == name {
			return p, true
		}
	}
	return Protocol{}, false
}

// ApplyProtocol returns command with the flags its protocol needs appended.
// The command is left alone when it already contains the protocol's first
// flag (such as --output-format), alone or as --flag=value, so a user who
// spells out other flags keeps full control. A command that ends with the
// protocol's PromptFlag (copilot -p) gets the flags before it. An unknown
// protocol leaves the command alone. The result is a new slice.
func ApplyProtocol(command []string, protocol string) []string {
	out := append([]string(nil), command...)
	p, ok := LookupProtocol(protocol)
	if !ok || len(p.Flags) == 0 {
		return out
	}
	key := p.Flags[0]
	for _, arg := range command {
		if arg == key || strings.HasPrefix(arg, key+"=") {
			return out
		}
	}
	if n := len(out); p.PromptFlag != "" && n > 1 && out[n-1] == p.PromptFlag {
		return append(append(out[:n-1:n-1], p.Flags...), p.PromptFlag)
	}
	return append(out, p.Flags...)
}

// AppendPrompt returns args (a command with its protocol's flags) with the
// prompt where a protocol that takes it as an argument wants it: last, or
// as the value of the protocol's PromptFlag, which is added unless args
// already ends with it. Other protocols leave args alone. The result is a
// new slice.
func AppendPrompt(args []string, protocol, prompt string) []string {
	out := append([]string(nil), args...)
	p, ok := LookupProtocol(protocol)
	if !ok || p.Prompt != PromptArgument || prompt == "" {
		return out
	}
	if p.PromptFlag != "" && (len(out) == 0 || out[len(out)-1] != p.PromptFlag) {
		out = append(out, p.PromptFlag)
	}
	return append(out, prompt)
}

// SessionTitleProbe returns a shell snippet that, run where the harness ran
// (in its working directory), prints the lines of the harness's transcript
// that carry the session's title, for ParseSessionTitle to read. It returns
// "" for protocols that print their title in band, and for a session id that
// is not a plain identifier (it is never interpolated into the script
// otherwise).
//
// Claude Code keeps its titles only in its transcript file,
// ~/.claude/projects/<cwd with "/" and "." replaced by "-">/<session>.jsonl
// (under $CLAUDE_CONFIG_DIR when set).
func SessionTitleProbe(protocol, sessionID string) string {
	if protocol != "claude-json" && protocol != "claude-stream" {
		return ""
	}
	if sessionID == "" || len(sessionID) > 128 {
		return ""
	}
	for _, c := range sessionID {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return ""
		}
	}
	return `d=$(pwd | sed 's#[/.]#-#g'); ` +
		`f="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects/$d/` + sessionID + `.jsonl"; ` +
		`[ -f "$f" ] && grep -E '"(customTitle|aiTitle)"' "$f"; true`
}

// ParseSessionTitle reads the output of a SessionTitleProbe: the latest
// custom title if any, else the latest AI title, else none.
func ParseSessionTitle(output string) (string, bool) {
	var custom, ai string
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 64<<10), DefaultSoftLimit)
	for sc.Scan() {
		line := sc.Bytes()
		t, ok := jsonscan.String(jsonscan.Get(line, "type"))
		if !ok {
			continue
		}
		switch t {
		case "custom-title":
			if s, ok := jsonscan.String(jsonscan.Get(line, "customTitle")); ok && strings.TrimSpace(s) != "" {
				custom = strings.TrimSpace(s)
			}
		case "ai-title":
			if s, ok := jsonscan.String(jsonscan.Get(line, "aiTitle")); ok && strings.TrimSpace(s) != "" {
				ai = strings.TrimSpace(s)
			}
		}
	}
	if custom != "" {
		return custom, true
	}
	return ai, ai != ""
}
