package lab

import (
	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/modelsim"
)

// What the harnesses cannot do or do not print, each with the reason. A
// check these make not applicable is reported as such, never as a pass.

// notApplicable says why a scenario cannot run on a harness, or "".
func notApplicable(h modelsim.Harness, s *modelsim.Scenario) string {
	if h.Protocol == "none" {
		return h.Title + " runs against the simulator (modelsim prints its setup), but agentstream has no adapter for its JSON output yet"
	}
	if len(s.FollowUps) > 0 && h.Protocol != "claude-stream" && h.Protocol != "acp" {
		return "protocol " + h.Protocol + " takes one prompt per run; a conversation needs claude-stream or ACP"
	}
	return ""
}

// autoScenario is the scenario also run with --protocol auto on each
// harness, whose events must equal the explicit protocol's.
const autoScenario = "shell"

// autoReason says why a case is not also run with --protocol auto, or "".
func autoReason(h modelsim.Harness, s *modelsim.Scenario) string {
	switch h.Protocol {
	case "acp":
		return "auto gives the prompt as text on stdin; an ACP agent needs the protocol's handshake"
	case "claude-stream":
		return "auto gives the prompt as text on stdin; claude-stream sends a stream-json message"
	}
	if s.Name != autoScenario {
		return "auto is compared on the " + autoScenario + " scenario"
	}
	return ""
}

// inputHidden says why a harness prints no tool call's input, or "".
func inputHidden(harness string) string {
	if harness == "gemini-acp" {
		return "Gemini CLI's ACP tool calls carry no rawInput"
	}
	return ""
}

// outputHidden says why a harness prints no tool's output, or "".
func outputHidden(harness string) string {
	if harness == "gemini-acp" {
		return "Gemini CLI's ACP tool results carry no content"
	}
	return ""
}

// noExitCode says why a harness's shell results carry no exit code nor
// say that a command failed, or "".
func noExitCode(harness string) string {
	switch harness {
	case "gemini":
		return "Gemini CLI's stream-json tool_result says success for a command that failed, with no exit code"
	case "claude-acp":
		return "claude-agent-acp gives a failed command's result with no exit code"
	case "gemini-acp":
		return "Gemini CLI's ACP says completed for a command that failed, with no content and no exit code"
	case "qwen-acp":
		return "Qwen Code's ACP gives the exit code only inside the result's text"
	}
	return ""
}

const tailKept = "the harness keeps the tail of a long output, whose head is all that the 8,000 characters of a tool.result show"

// limits are the checks a harness's own defect makes not applicable in a
// scenario, with the defect.
var limits = map[[2]string]struct {
	checks []string
	defect string
}{
	{"qwen", "bigoutput"}:     {[]string{"tool.result"}, tailKept},
	{"qwen-acp", "bigoutput"}: {[]string{"tool.result"}, tailKept},
	{"opencode", "bigoutput"}: {[]string{"tool.result"}, tailKept},
	{"gemini-acp", "subagent"}: {[]string{"tool.result", "tool.call"},
		"Gemini CLI's ACP mode denies the subagent tool by its policy (\"denied by policy\"), so the subagent never runs"},
	{"droid", "subagent"}: {[]string{"tool.result"},
		"droid exec runs a subagent through its daemon, which it cannot reach offline (\"Could not reach the daemon\")"},
	{"qwen-acp", "exhausted"}: {[]string{"session.ended", "exit"},
		"Qwen Code's ACP answers a prompt whose retries ran out with stopReason cancelled, not an error"},
	{"gemini", "bigoutput"}: {[]string{"tool.result", "message", "raw", "usage.session", "recap", "turns"},
		"Gemini CLI 0.61.0 exits before its stdout drains: the 200,000-line result is cut at 64 KiB, mid-line, and the rest of the run is lost"},
}

// limit says why a check is not applicable because of a harness's own
// defect, or "".
func limit(harness, scenario, check string) string {
	l, ok := limits[[2]string{harness, scenario}]
	if !ok {
		return ""
	}
	for _, c := range l.checks {
		if c == check {
			return l.defect
		}
	}
	return ""
}

// usageReport says why a harness prints no usage of a scope ("call" or
// "session"), or "".
func usageReport(harness, scope string) string {
	switch harness {
	case "copilot":
		return "Copilot CLI prints no token counts with a custom provider"
	}
	if scope == "session" && harness == "opencode" {
		return "opencode prints usage per step (step_finish), no session total"
	}
	if scope == "session" && harness == "qwen-acp" {
		return "Qwen Code's ACP reports each call's usage (agent_message_chunk _meta), no session total"
	}
	if scope == "call" {
		switch harness {
		case "codex":
			return "codex exec --json prints only the thread's total (turn.completed)"
		case "gemini":
			return "Gemini CLI prints one total per run (result.stats)"
		case "droid":
			return "droid prints one total per run (completion.usage)"
		case "gemini-acp", "claude-acp":
			return "the ACP agent reports no per-call usage"
		}
	}
	return ""
}

// sessionThreads names the calls a harness's session total counts: "" for
// all, or only the main conversation's (the ACP agents' prompt responses
// count their own calls, not their subagents').
func sessionThreads(harness string) string {
	switch harness {
	case "claude-acp", "gemini-acp":
		return modelsim.ThreadMain
	}
	return ""
}

// silentRetries says why a harness's retries after an error of status give
// no retry event, or "".
func silentRetries(harness string, status int) string {
	switch harness {
	case "codex":
		if status >= 500 {
			return "Codex retries a request that failed with 5xx silently; it prints Reconnecting for a rate limit"
		}
	case "gemini", "gemini-acp":
		return "Gemini CLI reports retries on stderr only"
	case "claude-acp":
		return "claude-agent-acp does not pass Claude Code's retries to the client"
	case "qwen":
		return "Qwen Code prints system/retry for the retries of its own loop only, not for its API client's"
	case "qwen-acp", "opencode", "droid":
		return "the harness retries silently"
	}
	return ""
}

// acpKinds are the ACP tool kinds of the roles, which ACP agents give as a
// tool call's name unless they name the tool in _meta.
var acpKinds = map[string]string{
	modelsim.RoleShell: "execute", modelsim.RoleEdit: "edit", modelsim.RoleWrite: "edit",
	modelsim.RoleRead: "read", modelsim.RoleSubagent: "think",
}

// printedName is the tool name a harness prints for a tool the simulator
// called: its own, except where the dialect names the call otherwise.
func printedName(harness string, st modelsim.SentTool) string {
	switch harness {
	case "codex":
		// codex exec --json prints items, named by their type.
		if st.Name == "exec_command" {
			return "command_execution"
		}
	case "gemini-acp", "qwen-acp":
		if harness == "qwen-acp" && st.Role == modelsim.RoleSubagent {
			return "other" // Qwen's agent tool has the kind other
		}
		if k := acpKinds[st.Role]; k != "" {
			return k
		}
	}
	return st.Name
}

// visible is what a harness can report of a call's usage: Gemini CLI
// counts the candidates' tokens only, without the thoughts, and its ACP
// mode gives the prompt's size (cache included) and the output, so the
// input not read from cache is unknown.
func visible(harness string, u usage, reasoning int64) usage {
	switch harness {
	case "gemini":
		u.out -= reasoning
	case "gemini-acp":
		u = usage{out: u.out - reasoning}
	}
	return u
}

// knownDefects are checks that fail because of a defect of an adapter
// being fixed apart, each naming the defect; "*" stands for every scenario.
// The run reports them as known instead of failing. It is empty: every
// pinned harness passes.
var knownDefects = map[[3]string]string{}

// pendingRaw are the native line types of a protocol that fall to raw
// because of a known adapter defect, with the defect.
var pendingRaw = map[string]map[string]string{}

func knownDefect(harness, scenario, check string) string {
	if d, ok := knownDefects[[3]string{harness, scenario, check}]; ok {
		return d
	}
	return knownDefects[[3]string{harness, "*", check}]
}

// subagentHidden says why a harness prints nothing of a subagent's own
// calls, or "".
func subagentHidden(harness string) string {
	switch harness {
	case "opencode":
		return "opencode run --format json prints the main session's events only"
	case "qwen":
		return "Qwen Code runs the agent in the background and prints nothing of its calls"
	case "gemini":
		return "Gemini CLI prints the subagent's invocation and its end, nothing of its calls"
	case "qwen-acp":
		return "Qwen Code's ACP reports the agent tool's call and result, nothing of the subagent's calls"
	}
	return ""
}

// explicitTurns reports whether a protocol's dialect marks its turns, so
// that events before the first turn are in turn 0.
func explicitTurns(protocol string) bool {
	p, _ := agentstream.LookupProtocol(protocol)
	return p.ExplicitTurns
}
