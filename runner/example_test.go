package runner_test

import (
	"context"
	"fmt"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/runner"
)

func ExampleRunner() {
	r := &runner.Runner{
		Command:  []string{"/bin/sh", "-c", `echo '{"type":"message","role":"assistant","text":"hello"}'`},
		Protocol: "jsonl",
		Handler: agentstream.HandlerFunc(func(_ context.Context, e agentstream.Envelope) error {
			fmt.Println(e.Seq, e.Type())
			return nil
		}),
	}
	res, err := r.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Ended.Status, res.Ended.Reason)
	// Output:
	// 1 message
	// 2 session.ended
	// succeeded exit
}
