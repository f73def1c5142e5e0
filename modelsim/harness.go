package modelsim

import (
	"path/filepath"
	"strings"
)

// A Harness says how one coding-agent CLI is pointed at a server: the API it
// calls, the environment variables and the configuration files it needs,
// and how agentstream runs it.
type Harness struct {
	// Name names the harness in the lab: claude, codex, gemini-acp, ...
	Name string
	// Title is the CLI's own name.
	Title string
	// API is the model API it calls (one of the API constants).
	API string
	// Package is the npm package whose version is the harness's.
	Package string
	// Protocol is agentstream's protocol for it.
	Protocol string
	// Command is how agentstream runs it, without the flags the protocol
	// adds and without the prompt.
	Command []string

	env   []string // KEY=VALUE, with {url}, {home} and {dir} to fill
	files []File   // paths relative to {home} or {dir}
}

// A File is a configuration file a harness reads.
type File struct {
	Path    string
	Content string
}

// An Environment is what a harness needs to reach a server: the variables
// to set (KEY=VALUE, HOME among them) and the files to write.
type Environment struct {
	Env   []string
	Files []File
}

// Environment fills the harness's needs for a server at baseURL (such as
// http://127.0.0.1:8080), a HOME and a working directory.
func (h Harness) Environment(baseURL, home, dir string) Environment {
	r := strings.NewReplacer("{url}", strings.TrimSuffix(baseURL, "/"), "{home}", home, "{dir}", dir)
	out := Environment{Env: []string{"HOME=" + home}}
	for _, e := range h.env {
		out.Env = append(out.Env, r.Replace(e))
	}
	for _, f := range h.files {
		out.Files = append(out.Files, File{Path: filepath.Clean(r.Replace(f.Path)), Content: r.Replace(f.Content)})
	}
	return out
}

// The environment of the harnesses that call the Anthropic API. Retries are
// cut to two; IS_SANDBOX lets root bypass permissions.
var claudeEnv = []string{
	"ANTHROPIC_BASE_URL={url}",
	"ANTHROPIC_API_KEY=lab-api-key",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	"DISABLE_AUTOUPDATER=1",
	"DISABLE_TELEMETRY=1",
	"CLAUDE_CODE_MAX_RETRIES=2",
	"IS_SANDBOX=1",
}

var geminiEnv = []string{
	"GEMINI_API_KEY=lab-api-key",
	"GOOGLE_GEMINI_BASE_URL={url}",
	"GEMINI_CLI_TRUST_WORKSPACE=true",
	"GEMINI_CLI_NO_RELAUNCH=true",
}

var geminiSettings = File{Path: "{home}/.gemini/settings.json", Content: `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"maxAttempts": 3}
}
`}

var qwenEnv = []string{
	"OPENAI_BASE_URL={url}/v1",
	"OPENAI_API_KEY=lab-api-key",
	"OPENAI_MODEL=modelsim",
}

// qwenSettings turns off the model calls Qwen Code makes after a turn,
// outside the conversation: memory extraction and next-prompt suggestions.
var qwenSettings = File{Path: "{home}/.qwen/settings.json", Content: `{"memory": {"enableManagedAutoMemory": false}, "ui": {"enableFollowupSuggestions": false}, "model": {"generationConfig": {"maxRetries": 2}}}
`}

// Harnesses returns every harness the lab runs, in a fixed order.
func Harnesses() []Harness {
	return []Harness{
		{
			Name: "claude", Title: "Claude Code", API: APIAnthropic, Package: "@anthropic-ai/claude-code",
			Protocol: "claude-json", Command: []string{"claude", "-p", "--permission-mode", "bypassPermissions"},
			env: claudeEnv,
		},
		{
			Name: "claude-stream", Title: "Claude Code (stream-json input)", API: APIAnthropic, Package: "@anthropic-ai/claude-code",
			Protocol: "claude-stream", Command: []string{"claude", "-p", "--permission-mode", "bypassPermissions", "--include-partial-messages"},
			env: claudeEnv,
		},
		{
			Name: "codex", Title: "Codex", API: APIResponses, Package: "@openai/codex",
			Protocol: "codex-json", Command: []string{"codex", "exec", "--skip-git-repo-check"},
			env: []string{"CODEX_HOME={home}/.codex", "MODELSIM_API_KEY=lab-api-key"},
			files: []File{{Path: "{home}/.codex/config.toml", Content: `model = "modelsim"
model_provider = "modelsim"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.modelsim]
name = "modelsim"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "MODELSIM_API_KEY"
request_max_retries = 2
stream_max_retries = 2
`}},
		},
		{
			Name: "gemini", Title: "Gemini CLI", API: APIGemini, Package: "@google/gemini-cli",
			Protocol: "gemini-json", Command: []string{"gemini", "--yolo"},
			env: geminiEnv, files: []File{geminiSettings},
		},
		{
			Name: "qwen", Title: "Qwen Code", API: APIChat, Package: "@qwen-code/qwen-code",
			Protocol: "qwen-json", Command: []string{"qwen", "--yolo"},
			env: qwenEnv, files: []File{qwenSettings},
		},
		{
			Name: "opencode", Title: "opencode", API: APIChat, Package: "opencode-ai",
			Protocol: "opencode-json", Command: []string{"opencode", "run"},
			env: []string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1"},
			files: []File{{Path: "{dir}/opencode.json", Content: `{
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "modelsim": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "modelsim",
      "options": {"baseURL": "{url}/v1", "apiKey": "lab-api-key"},
      "models": {"modelsim": {"name": "modelsim"}}
    }
  },
  "model": "modelsim/modelsim"
}
`}},
		},
		{
			Name: "copilot", Title: "GitHub Copilot CLI", API: APIChat, Package: "@github/copilot",
			Protocol: "copilot-json", Command: []string{"copilot"},
			env: []string{
				"COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL={url}/v1", "COPILOT_PROVIDER_TYPE=openai",
				"COPILOT_PROVIDER_API_KEY=lab-api-key", "COPILOT_MODEL=gpt-4.1", "COPILOT_ALLOW_ALL=true", "COPILOT_AUTO_UPDATE=false",
			},
		},
		{
			Name: "droid", Title: "Factory droid", API: APIChat, Package: "@factory/cli-linux-x64",
			Protocol: "droid-json", Command: []string{"droid", "exec", "--skip-permissions-unsafe", "-m", "custom:modelsim"},
			env: []string{"FACTORY_DISABLE_KEYRING=1"},
			files: []File{{Path: "{home}/.factory/settings.json", Content: `{"customModels": [{"model": "modelsim", "displayName": "modelsim", "baseUrl": "{url}/v1", "apiKey": "lab-api-key", "provider": "generic-chat-completion-api", "maxOutputTokens": 8000}]}
`}},
		},
		{
			Name: "pi", Title: "pi coding agent", API: APIChat, Package: "@mariozechner/pi-coding-agent",
			Protocol: "none", Command: []string{"pi", "-p", "--mode", "json", "--offline", "--no-session", "--provider", "modelsim", "--model", "modelsim"},
			env: []string{"PI_OFFLINE=1"},
			files: []File{{Path: "{home}/.pi/agent/models.json", Content: `{"providers": {"modelsim": {"baseUrl": "{url}/v1", "api": "openai-completions", "apiKey": "lab-api-key",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false}, "models": [{"id": "modelsim"}]}}}
`}},
		},
		{
			Name: "claude-acp", Title: "Claude Agent (ACP)", API: APIAnthropic, Package: "@zed-industries/claude-agent-acp",
			Protocol: "acp", Command: []string{"claude-agent-acp"},
			env: claudeEnv,
		},
		{
			Name: "gemini-acp", Title: "Gemini CLI (ACP)", API: APIGemini, Package: "@google/gemini-cli",
			Protocol: "acp", Command: []string{"gemini", "--acp"},
			env: geminiEnv, files: []File{geminiSettings},
		},
		{
			Name: "qwen-acp", Title: "Qwen Code (ACP)", API: APIChat, Package: "@qwen-code/qwen-code",
			Protocol: "acp", Command: []string{"qwen", "--acp"},
			env: qwenEnv, files: []File{qwenSettings},
		},
	}
}

// LookupHarness returns the harness called name.
func LookupHarness(name string) (Harness, bool) {
	for _, h := range Harnesses() {
		if h.Name == name {
			return h, true
		}
	}
	return Harness{}, false
}
