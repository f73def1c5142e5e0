package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentstream/agentstream/adapter"
)

const completionDoc = `Prints a completion script for bash, zsh or fish on stdout. It completes
the commands, each command's flags, the values of --protocol and --color,
and file names. It is made from the command table of this binary, so
generate it again after an upgrade.

  bash:  agentstream completion bash > ~/.local/share/bash-completion/completions/agentstream
         (or add 'source <(agentstream completion bash)' to ~/.bashrc)
  zsh:   agentstream completion zsh > "${fpath[1]}/_agentstream"
         (or add 'source <(agentstream completion zsh)' to ~/.zshrc, after compinit)
  fish:  agentstream completion fish > ~/.config/fish/completions/agentstream.fish`

func cmdCompletion(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "completion", "bash|zsh|fish", completionDoc)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream completion: one shell expected: bash, zsh or fish")
		return exitUsage
	}
	cmds := completionCommands(ctx, e.commands)
	var script string
	switch pos[0] {
	case "bash":
		script = bashCompletion(cmds)
	case "zsh":
		script = zshCompletion(cmds)
	case "fish":
		script = fishCompletion(cmds)
	default:
		fmt.Fprintf(e.stderr, "agentstream completion: unknown shell %q: want bash, zsh or fish\n", pos[0])
		return exitUsage
	}
	if _, err := io.WriteString(e.stdout, script); err != nil {
		fmt.Fprintln(e.stderr, "agentstream completion:", err)
		return exitError
	}
	return exitOK
}

// completionCommand is what a completion script knows of a command.
type completionCommand struct {
	name, summary string
	flags         []completionFlag
}

type completionFlag struct {
	name, usage string
	isBool      bool
	values      []string // the words its value may be; none: a file name
}

// completionCommands reads every command's flags by running it with -h on
// an environment that keeps the flag set it declares and discards its
// output.
func completionCommands(ctx context.Context, table map[string]command) []completionCommand {
	var out []completionCommand
	for _, name := range commandNames(table) {
		var sets []*flag.FlagSet
		sub := &env{
			stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
			getenv:   func(string) string { return "" },
			onFlags:  func(fs *flag.FlagSet) { sets = append(sets, fs) },
			commands: table,
		}
		table[name].run(ctx, sub, []string{"-h"})
		c := completionCommand{name: name, summary: table[name].summary}
		if len(sets) > 0 {
			sets[0].VisitAll(func(f *flag.Flag) {
				cf := completionFlag{name: f.Name, usage: firstClause(f.Usage)}
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					cf.isBool = true
				}
				cf.values = flagValues(f)
				c.flags = append(c.flags, cf)
			})
		}
		sort.Slice(c.flags, func(i, j int) bool { return c.flags[i].name < c.flags[j].name })
		out = append(out, c)
	}
	return out
}

// flagValues returns the words a flag's value may be, when they are few
// and known.
func flagValues(f *flag.Flag) []string {
	switch f.Name {
	case "protocol":
		var vals []string
		if f.DefValue == "auto" || strings.Contains(f.Usage, "auto") {
			vals = append(vals, "auto")
		}
		if strings.Contains(f.Usage, "events") {
			vals = append(vals, "events")
		}
		return append(vals, adapter.Names()...)
	case "color":
		return []string{"auto", "always", "never"}
	}
	return nil
}

// firstClause shortens a flag's usage to what a completion menu shows.
func firstClause(s string) string {
	if i := strings.IndexAny(s, ":("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// quoteSingle quotes s for a POSIX shell or fish.
func quoteSingle(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func bashCompletion(cmds []completionCommand) string {
	var b strings.Builder
	b.WriteString("# bash completion for agentstream (agentstream completion bash)\n")
	b.WriteString("_agentstream() {\n")
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n")
	b.WriteString("\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n")
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W %s -- \"$cur\"))\n\t\treturn\n\tfi\n", quoteSingle(strings.Join(names, " ")))
	b.WriteString("\tlocal flags= values=\n\tcase ${COMP_WORDS[1]} in\n")
	for _, c := range cmds {
		var flags []string
		var cases []string
		for _, f := range c.flags {
			flags = append(flags, "--"+f.name)
			if len(f.values) > 0 {
				cases = append(cases, fmt.Sprintf("--%s|-%s) values=%s ;;", f.name, f.name, quoteSingle(strings.Join(f.values, " "))))
			}
		}
		fmt.Fprintf(&b, "\t%s)\n\t\tflags=%s\n", c.name, quoteSingle(strings.Join(flags, " ")))
		if len(cases) > 0 {
			b.WriteString("\t\tcase $prev in\n")
			for _, cs := range cases {
				b.WriteString("\t\t" + cs + "\n")
			}
			b.WriteString("\t\tesac\n")
		}
		b.WriteString("\t\t;;\n")
	}
	b.WriteString("\tesac\n")
	b.WriteString("\tif [ -n \"$values\" ]; then\n\t\tCOMPREPLY=($(compgen -W \"$values\" -- \"$cur\"))\n\t\treturn\n\tfi\n")
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\t\treturn\n\tfi\n")
	b.WriteString("\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n}\n")
	b.WriteString("complete -o filenames -o bashdefault -F _agentstream agentstream\n")
	return b.String()
}

// zshQuote escapes a description for an _arguments spec or a _describe
// entry.
func zshQuote(s string) string {
	r := strings.NewReplacer("'", "", "[", "(", "]", ")", ":", " -", "\\", "")
	return r.Replace(s)
}

func zshCompletion(cmds []completionCommand) string {
	var b strings.Builder
	b.WriteString("#compdef agentstream\n# zsh completion for agentstream (agentstream completion zsh)\n")
	b.WriteString("_agentstream() {\n\tlocal -a commands\n\tcommands=(\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t\t'%s:%s'\n", c.name, zshQuote(c.summary))
	}
	b.WriteString("\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe -t commands 'agentstream command' commands\n\t\treturn\n\tfi\n")
	b.WriteString("\tshift words\n\t(( CURRENT-- ))\n\tcase $words[1] in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t%s)\n\t\t_arguments -s \\\n", c.name)
		for _, f := range c.flags {
			spec := "--" + f.name + "[" + zshQuote(f.usage) + "]"
			if !f.isBool {
				action := "_files"
				if len(f.values) > 0 {
					action = "(" + strings.Join(f.values, " ") + ")"
				}
				spec += ":" + f.name + ":" + action
			}
			fmt.Fprintf(&b, "\t\t\t'%s' \\\n", spec)
		}
		b.WriteString("\t\t\t'*:file:_files'\n\t\t;;\n")
	}
	b.WriteString("\tesac\n}\n")
	b.WriteString("if [ \"$funcstack[1]\" = \"_agentstream\" ]; then\n\t_agentstream \"$@\"\nelse\n\tcompdef _agentstream agentstream\nfi\n")
	return b.String()
}

func fishCompletion(cmds []completionCommand) string {
	var b strings.Builder
	b.WriteString("# fish completion for agentstream (agentstream completion fish)\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c agentstream -n __fish_use_subcommand -f -a %s -d %s\n", c.name, quoteSingle(c.summary))
	}
	for _, c := range cmds {
		cond := quoteSingle("__fish_seen_subcommand_from " + c.name)
		for _, f := range c.flags {
			line := fmt.Sprintf("complete -c agentstream -n %s -l %s -d %s", cond, f.name, quoteSingle(f.usage))
			switch {
			case f.isBool:
			case len(f.values) > 0:
				line += " -x -a " + quoteSingle(strings.Join(f.values, " "))
			default:
				line += " -r -F"
			}
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
