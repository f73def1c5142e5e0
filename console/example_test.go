package console_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/console"
)

func ExampleRenderer() {
	r := console.New(os.Stdout, console.Options{Width: 60})
	ctx := context.Background()
	for _, p := range []agentstream.Payload{
		&agentstream.SessionStarted{Harness: "claude-code", Version: "2.1.238", Model: "claude-sonnet-4-5", Cwd: "/src/app"},
		&agentstream.ToolCall{CallID: "1", Name: "Bash", Category: agentstream.CategoryExecute, Summary: "go test ./..."},
		&agentstream.ToolResult{CallID: "1", Output: "ok", Characters: 2},
		&agentstream.Message{Role: agentstream.RoleAssistant, Text: "All tests pass."},
		&agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion},
	} {
		r.Handle(ctx, agentstream.Envelope{Turn: 1, Payload: p})
	}
	r.Close()
	// Output:
	// ▶ claude-code 2.1.238 · claude-sonnet-4-5 · /src/app
	// ❯ Bash  go test ./...  ✓ 2 chars
	// All tests pass.
	// ── succeeded · completion ──────────────────────────────────
	// 1 turn · tokens not reported · cost not reported
}

func ExampleSanitize() {
	fmt.Printf("%q\n", console.Sanitize("\x1b]0;pwned\x07done\n::add-mask::secret"))
	// Output:
	// "done\n:\u200b:add-mask::secret"
}
