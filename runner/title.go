package runner

import (
	"context"
	"os/exec"
	"time"

	"github.com/agentstream/agentstream"
)

// titleTimeout bounds the title probe.
const titleTimeout = 5 * time.Second

// probeTitle runs the protocol's title probe where the harness ran, with its
// environment, and returns the title it finds, or "".
func probeTitle(protocol, sessionID, dir string, env []string) string {
	script := agentstream.SessionTitleProbe(protocol, sessionID)
	if script == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), titleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	title, _ := agentstream.ParseSessionTitle(string(out))
	return title
}
