package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/console"
)

const renderDoc = `Renders a recorded session the way 'agentstream run' shows it live. The input
may be native lines (any protocol) or normalized event envelopes. Envelopes
hold no live deltas, so their text shows whole.

Colour is used only on a terminal and never when NO_COLOR is set; --color
overrides both. The width is the terminal's, else $COLUMNS, else 80.

It fails (exit 1) on an input that is empty or binary, and on one none of
whose lines the protocol understands (every line would be raw): it names
the protocol the lines look like. Exit 2 is bad usage.`

func cmdRender(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "render", "[--protocol P|auto|events] [--width N] [--color auto|always|never] [--ci auto|github|none] [--quiet] [FILE|-]", renderDoc)
	protocol := fs.String("protocol", "auto", "the dialect of the input, or events for envelopes: "+protocolList())
	width := fs.Int("width", 0, "the width in columns (0: the terminal's, else $COLUMNS, else 80)")
	color := fs.String("color", "auto", "colour: auto, always or never")
	ci := fs.String("ci", "auto", "CI log format: auto (github when GITHUB_ACTIONS=true), github or none")
	quiet := fs.Bool("quiet", false, "render nothing but errors")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		fmt.Fprintln(e.stderr, "agentstream render: at most one FILE")
		return exitUsage
	}
	if err := checkProtocol(*protocol, "auto", "events"); err != nil {
		fmt.Fprintln(e.stderr, "agentstream render:", err)
		return exitUsage
	}
	opts, err := consoleOptions(e, *color, *ci, *width)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream render: %v\n", err)
		return exitUsage
	}
	opts.Quiet = *quiet
	name := "-"
	if len(pos) == 1 {
		name = pos[0]
	}
	r := console.New(e.stdout, opts)
	var werr error
	err = readInput(ctx, e, "render", name, func(in io.Reader) error {
		return foldInput(in, *protocol, func(env *agentstream.Envelope) {
			if werr == nil {
				werr = r.Handle(ctx, *env)
			}
		})
	})
	if cerr := r.Close(); werr == nil {
		werr = cerr
	}
	if err != nil {
		return inputFailed(ctx, e, "render", err)
	}
	if werr != nil {
		fmt.Fprintf(e.stderr, "agentstream render: %v\n", werr)
		return exitError
	}
	return exitOK
}

// consoleOptions settles colour, width and CI mode from the flags, the
// environment and whether stdout is a terminal.
func consoleOptions(e *env, color, ci string, width int) (console.Options, error) {
	var opts console.Options
	switch color {
	case "auto", "always", "never":
	default:
		return opts, fmt.Errorf("--color %q: want auto, always or never", color)
	}
	switch ci {
	case "auto":
		if e.getenv("GITHUB_ACTIONS") == "true" {
			opts.CI = console.CIGitHub
		}
	case "github":
		opts.CI = console.CIGitHub
	case "none":
	default:
		return opts, fmt.Errorf("--ci %q: want auto, github or none", ci)
	}
	opts.Color = console.UseColor(color, e.stdout, e.getenv)
	opts.Width = width
	if width <= 0 {
		opts.Width = console.Width(e.stdout, e.getenv)
	}
	return opts, nil
}

// openStepSummary opens $GITHUB_STEP_SUMMARY for appending, in GitHub mode.
func openStepSummary(e *env, opts console.Options) (*os.File, error) {
	path := e.getenv("GITHUB_STEP_SUMMARY")
	if opts.CI != console.CIGitHub || path == "" {
		return nil, nil
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}
