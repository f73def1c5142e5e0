package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

// zeroTime asks a Normalizer to take each event's own time.
var zeroTime time.Time

func protocolList() string { return strings.Join(adapter.Names(), ", ") }

// checkProtocol returns an error, for every command alike (each exits with
// exitUsage on it), when p is neither a protocol nor one of the other
// values the command takes (auto, events).
func checkProtocol(p string, also ...string) error {
	for _, a := range also {
		if p == a {
			return nil
		}
	}
	if _, err := adapter.Lookup(p); err == nil {
		return nil
	}
	want := "one of " + protocolList()
	if len(also) > 0 {
		want = strings.Join(also, ", ") + " or " + want
	}
	return fmt.Errorf("unknown protocol %q (want %s)", p, want)
}

func cmdProtocols(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "protocols", "", "Lists each protocol, how its harness takes the prompt, and the flags\nApplyProtocol appends to a command.")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	for _, a := range adapter.All() {
		flags := strings.Join(a.Flags, " ")
		if flags == "" {
			flags = "(none)"
		}
		fmt.Fprintf(e.stdout, "%-14s %-12s prompt: %-18s flags: %s\n", a.Name, a.Harness, a.Prompt, flags)
	}
	_ = agentstream.Protocols
	return exitOK
}
