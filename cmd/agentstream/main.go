// Command agentstream records what coding agents do: it normalizes their
// output into one event format, runs them, stores sessions and serves them.
//
// Run `agentstream help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// Exit codes decided in one place. Commands that run a harness add their own
// (see run.go).
const (
	exitOK    = 0
	exitError = 1 // an I/O or runtime error
	exitUsage = 2 // bad usage
	// exitSecret: export found an unmasked secret and wrote nothing.
	exitSecret = 3
	// exitAborted: interrupted by SIGINT (Ctrl-C) or SIGTERM.
	exitAborted = 130
)

// env is what a command gets from the process: its streams and environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// onFlags, when set, is handed every flag set a command declares
	// (completion reads the commands' flags this way).
	onFlags func(*flag.FlagSet)
	// commands is the command table (completion reads it; the table cannot
	// name it without an initialization cycle).
	commands map[string]command
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

// commands is the table of subcommands. Each lives in its own file.
var commands = map[string]command{
	"normalize":   {"native lines in, one event envelope per line out", cmdNormalize},
	"usage":       {"what sessions consumed: a session's recap, or totals by day, model, project…", cmdUsage},
	"protocols":   {"the protocols and the flags each adds to a command", cmdProtocols},
	"sessions":    {"list the stored sessions", cmdSessions},
	"search":      {"find stored events by their words, across sessions", cmdSearch},
	"show":        {"render a stored session (--follow tails a running one)", cmdShow},
	"export":      {"write a stored session's events or native lines", cmdExport},
	"import":      {"store a recorded native output file as a session", cmdImport},
	"renormalize": {"read a stored session's native lines again with today's adapters", cmdRenormalize},
	"serve":       {"serve the HTTP API and the web timeline", cmdServe},
	"render":      {"show a recorded session as run shows it live", cmdRender},
	"run":         {"run a coding agent and watch it live", cmdRun},
	"chat":        {"talk to a coding agent in the terminal", cmdChat},
	"demo":        {"the web timeline on recorded sessions, one replayed live", cmdDemo},
	"migrate":     {"bring the session database's schema up to date", cmdMigrate},
	"modelsim":    {"serve a scripted model API for offline harness runs", cmdModelsim},
	"version":     {"the version and commit agentstream was built from", cmdVersion},
	"completion":  {"a completion script for bash, zsh or fish", cmdCompletion},
	"token":       {"make, list and revoke the HTTP API's access tokens", cmdToken},
	"share":       {"make or revoke a read-only share link of a session", cmdShare},
}

// helpGroups orders the top-level help by task, the first steps first. A
// command missing here is listed under "More".
var helpGroups = []helpGroup{
	{"Start here", []string{"demo"}},
	{"Run and talk to an agent", []string{"run", "chat"}},
	{"Read a recorded output file", []string{"render", "normalize", "usage"}},
	{"Keep and browse sessions", []string{"import", "sessions", "show", "search", "serve", "share", "export", "renormalize"}},
	{"Set up", []string{"protocols", "migrate", "modelsim", "token", "completion", "version"}},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, commands: commands}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "--version", "-version":
		return cmdVersion(ctx, e, args[1:])
	case "help", "-h", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run(ctx, e, []string{"-h"})
			}
		}
		usage(stdout)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "agentstream: unknown command %q\n", name)
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, e, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "agentstream: a stable record of what coding agents do")
	fmt.Fprintln(w, "\nUsage: agentstream COMMAND [flags] [args]")
	for _, g := range commandGroups(commands) {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, n := range g.names {
			fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
		}
	}
	fmt.Fprintln(w, "\nNew here? 'agentstream demo' shows it at work, no agent needed.")
	fmt.Fprintln(w, "Run 'agentstream COMMAND -h' for a command's flags, 'agentstream completion -h'\nfor shell completion.")
}

type helpGroup struct {
	title string
	names []string
}

// commandGroups returns the groups of helpGroups with the commands of table
// they name, then the commands they miss, in alphabetical order, under
// "More".
func commandGroups(table map[string]command) []helpGroup {
	var groups []helpGroup
	seen := map[string]bool{}
	for _, g := range helpGroups {
		var names []string
		for _, n := range g.names {
			if _, ok := table[n]; ok && !seen[n] {
				names = append(names, n)
				seen[n] = true
			}
		}
		if len(names) > 0 {
			groups = append(groups, helpGroup{g.title, names})
		}
	}
	var more []string
	for n := range table {
		if !seen[n] {
			more = append(more, n)
		}
	}
	if len(more) > 0 {
		sort.Strings(more)
		groups = append(groups, helpGroup{"More", more})
	}
	return groups
}

// commandNames returns every command of table in the order the help lists
// them.
func commandNames(table map[string]command) []string {
	var names []string
	for _, g := range commandGroups(table) {
		names = append(names, g.names...)
	}
	return names
}

// newFlags returns a flag set that reports errors instead of exiting, with
// a usage line printed on -h.
func newFlags(e *env, name, synopsis, doc string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	if e.onFlags != nil {
		e.onFlags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: agentstream %s %s\n\n%s\n\nFlags:\n", name, synopsis, doc)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; it returns an exit code and false when the command
// must stop (help was asked for, or the flags were wrong).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}
