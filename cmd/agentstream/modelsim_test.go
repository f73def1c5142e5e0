package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestModelsim starts the command as a process, reads the setup it prints,
// and asks the server it serves for the scenario's first answer.
func TestModelsim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := filepath.Join(t.TempDir(), "requests.jsonl")
	cmd := exec.CommandContext(ctx, binary, "modelsim", "--scenario", "text", "--record", rec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	r := bufio.NewReader(out)
	first, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	// "# modelsim: scenario text at http://127.0.0.1:PORT"
	_, url, ok := strings.Cut(strings.TrimSpace(first), " at ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q names no address", first)
	}
	var setup strings.Builder
	for {
		line, err := r.ReadString('\n')
		setup.WriteString(line)
		if err != nil || strings.Contains(line, "# Qwen Code (ACP)") {
			break
		}
	}
	for _, want := range []string{
		"export ANTHROPIC_BASE_URL='" + url + "'",
		"export GOOGLE_GEMINI_BASE_URL='" + url + "'",
		`mkdir -p "$HOME/.codex" && cat > "$HOME/.codex/config.toml" <<'MODELSIM_EOF'`,
		`base_url = "` + url + `/v1"`,
		"agentstream run --protocol claude-json --prompt PROMPT -- claude -p --permission-mode bypassPermissions",
	} {
		if !strings.Contains(setup.String(), want) {
			t.Errorf("setup lacks %q:\n%s", want, setup.String())
		}
	}
	resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "Hello from the lab: lab-text-ok.") {
		t.Errorf("answer %s", body)
	}
}

func TestModelsimUsage(t *testing.T) {
	out, _, code := runCLI(t, "", "modelsim", "--list")
	if code != 0 || !strings.Contains(out, "ratelimit") || !strings.Contains(out, "claude-acp") {
		t.Errorf("--list: code %d\n%s", code, out)
	}
	_, errOut, code := runCLI(t, "", "modelsim")
	if code != exitUsage || !strings.Contains(errOut, "--scenario is required") {
		t.Errorf("no scenario: code %d %s", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "modelsim", "--scenario", "nosuch")
	if code != exitError || !strings.Contains(errOut, "no built-in scenario of that name") {
		t.Errorf("unknown scenario: code %d %s", code, errOut)
	}
}
