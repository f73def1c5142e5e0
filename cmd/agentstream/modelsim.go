package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentstream/agentstream/modelsim"
)

const modelsimDoc = `Serves a scripted model API on 127.0.0.1 (Anthropic Messages, OpenAI
Responses, OpenAI Chat Completions and Gemini) that answers from a scenario:
a JSON file that says call by call what the model replies (see the package
documentation of modelsim), or the name of a built-in one (--list).

Once it listens, it prints on stdout what each harness needs to reach it:
the environment variables and the configuration files (a shell script to
source or copy), and the agentstream run command of each. Why a request got
no answer is written on stderr. It serves until interrupted.`

func cmdModelsim(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "modelsim", "--scenario FILE [flags]", modelsimDoc)
	scenario := fs.String("scenario", "", "the scenario `FILE`, or a built-in scenario's name")
	addr := fs.String("addr", "127.0.0.1:0", "the address to listen on")
	dir := fs.String("dir", "", "the harness's working directory, for the scenario's relative paths (default: the current one)")
	harness := fs.String("harness", "", "print the setup of this harness only")
	record := fs.String("record", "", "append each request and its answer to `FILE` as a JSON line")
	list := fs.Bool("list", false, "list the built-in scenarios and the harnesses, and exit")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *list {
		all, err := modelsim.Builtin()
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream modelsim: %v\n", err)
			return exitError
		}
		fmt.Fprintln(e.stdout, "scenarios:")
		for _, s := range all {
			fmt.Fprintf(e.stdout, "  %-22s %s\n", s.Name, s.Description)
		}
		fmt.Fprintln(e.stdout, "harnesses:")
		for _, h := range modelsim.Harnesses() {
			fmt.Fprintf(e.stdout, "  %-22s %s (%s)\n", h.Name, h.Title, h.API)
		}
		return exitOK
	}
	if *scenario == "" {
		fmt.Fprintln(e.stderr, "agentstream modelsim: --scenario is required (or --list)")
		return exitUsage
	}
	var harnesses []modelsim.Harness
	if *harness != "" {
		h, ok := modelsim.LookupHarness(*harness)
		if !ok {
			fmt.Fprintf(e.stderr, "agentstream modelsim: unknown harness %q (see --list)\n", *harness)
			return exitUsage
		}
		harnesses = []modelsim.Harness{h}
	} else {
		harnesses = modelsim.Harnesses()
	}
	s, err := modelsim.LoadNamed(*scenario)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream modelsim: %v\n", err)
		return exitError
	}
	workDir := *dir
	if workDir == "" {
		workDir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(workDir); err == nil {
		workDir = abs
	}
	opts := modelsim.Options{Dir: workDir, Log: e.stderr}
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream modelsim: %v\n", err)
			return exitError
		}
		defer f.Close()
		var mu sync.Mutex
		opts.Observe = func(r modelsim.Record) {
			b, err := json.Marshal(r)
			if err != nil {
				return
			}
			mu.Lock()
			f.Write(append(b, '\n'))
			mu.Unlock()
		}
	}
	srv := modelsim.New(s, opts)
	err = modelsim.Listen(ctx, *addr, srv, func(a net.Addr) {
		printSetup(e.stdout, "http://"+a.String(), s, harnesses)
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream modelsim: %v\n", err)
		return exitError
	}
	return exitOK
}

// printSetup writes, as a shell script, what each harness needs to reach
// the server at url.
func printSetup(w io.Writer, url string, s *modelsim.Scenario, harnesses []modelsim.Harness) {
	fmt.Fprintf(w, "# modelsim: scenario %s at %s\n", s.Name, url)
	fmt.Fprintf(w, "# prompt: %s\n", s.Prompt)
	for _, h := range harnesses {
		env := h.Environment(url, "$HOME", ".")
		fmt.Fprintf(w, "\n# %s (%s, %s API)\n", h.Title, h.Name, h.API)
		fmt.Fprintf(w, "#   agentstream run --protocol %s --prompt PROMPT -- %s\n", h.Protocol, strings.Join(h.Command, " "))
		for _, kv := range env.Env {
			if strings.HasPrefix(kv, "HOME=") {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(w, "export %s=%s\n", k, shellQuote(v))
		}
		for _, f := range env.Files {
			fmt.Fprintf(w, "mkdir -p %s && cat > %s <<'MODELSIM_EOF'\n%sMODELSIM_EOF\n",
				shellQuote(filepath.Dir(f.Path)), shellQuote(f.Path), f.Content)
		}
	}
}

// shellQuote quotes a value for sh, leaving $HOME to expand.
func shellQuote(v string) string {
	if strings.Contains(v, "$HOME") {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`").Replace(v) + `"`
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
