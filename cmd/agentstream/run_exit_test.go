package main

import (
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/runner"
)

func TestRunExitCode(t *testing.T) {
	ended := func(status, reason string) agentstream.SessionEnded {
		return agentstream.SessionEnded{Status: status, Reason: reason}
	}
	tests := []struct {
		name string
		res  runner.Result
		want int
	}{
		{"succeeded", runner.Result{Exited: true, Ended: ended("succeeded", "completion")}, 0},
		{"harness's own code", runner.Result{Exited: true, ExitCode: 3, Ended: ended("failed", "exit")}, 3},
		// An ACP agent that refused the handshake, or a harness that
		// reported a failure and exited 0: the run failed all the same.
		{"failed, exit 0", runner.Result{Exited: true, Ended: ended("failed", "completion")}, exitError},
		{"cancelled, exit 0", runner.Result{Exited: true, Ended: ended("cancelled", "completion")}, exitError},
		{"signal", runner.Result{Exited: true, ExitCode: -1, Signal: 9, Ended: ended("failed", "exit")}, 137},
		{"stopped after success", runner.Result{Ended: ended("succeeded", "completion")}, 0},
		{"stopped after failure", runner.Result{Ended: ended("failed", "completion")}, exitError},
		{"idle", runner.Result{Ended: ended("failed", "idle-timeout")}, exitIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runExitCode(tt.res); got != tt.want {
				t.Errorf("runExitCode = %d, want %d", got, tt.want)
			}
		})
	}
}
