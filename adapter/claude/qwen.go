package claude

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// qwenRetry maps Qwen Code's system/retry line: the attempt, the most
// retries and the delay are in its data.
func (d *Decoder) qwenRetry(dst []agentstream.Event, line []byte) []agentstream.Event {
	data := jsonscan.Get(line, "data")
	return append(dst, agentstream.E(&agentstream.Retry{
		Attempt:    fields.Int(jsonscan.Get(data, "attempt")),
		MaxRetries: fields.Int(jsonscan.Get(data, "maxRetries")),
		DelayMs:    fields.Float(jsonscan.Get(data, "delayMs")),
		Error:      fields.Str(jsonscan.Get(data, "reason")),
	}))
}

// shellExitCode takes the exit code of a shell result from its text, where
// the harness gives it: Qwen Code's run_shell_command ends with "Exit Code:
// 3", Claude Code's failed Bash starts with "Exit code 3".
func (d *Decoder) shellExitCode(r *agentstream.ToolResult) {
	var rest string
	var ok bool
	switch {
	case d.cfg.Harness == Qwen.Harness && r.Name == "run_shell_command":
		_, rest, ok = strings.Cut(r.Output, "\nExit Code: ")
	case d.cfg.Harness == Claude.Harness && r.Name == "Bash" && r.IsError:
		rest, ok = strings.CutPrefix(r.Output, "Exit code ")
	}
	if !ok {
		return
	}
	line, _, _ := strings.Cut(rest, "\n")
	if n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64); err == nil {
		r.ExitCode = &n
	}
}
