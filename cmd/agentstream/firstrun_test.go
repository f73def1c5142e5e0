package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/internal/demo"
)

func TestVersionLine(t *testing.T) {
	tail := " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "agentstream devel" + tail},
		{"devel", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "agentstream devel" + tail},
		{"tag", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "agentstream v0.4.0" + tail},
		{"go install of a commit", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202024649-be52d2d6de1b"}},
			"agentstream v0.0.0-20261202024649-be52d2d6de1b (commit be52d2d6de1b)" + tail},
		{"pseudo-version after a tag", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.1-0.20261202024649-be52d2d6de1b+dirty"}},
			"agentstream v0.4.1-0.20261202024649-be52d2d6de1b+dirty (commit be52d2d6de1b)" + tail},
		{"checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "be52d2d6de1b9cf7f4ae34f5c5c3aefda62cd70d"},
			{Key: "vcs.time", Value: "2026-12-02T02:46:49Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, "agentstream devel (commit be52d2d6de1b, 2026-12-02T02:46:49Z, modified)" + tail},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionLine(tc.bi); got != tc.want {
				t.Errorf("versionLine = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionCommand runs the built binary: --version and version print
// the line of the binary's own build information.
func TestVersionCommand(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatal(err)
	}
	var modVersion string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "mod" {
			modVersion = f[2]
		}
	}
	if modVersion == "" {
		t.Fatalf("no mod line in go version -m:\n%s", out)
	}
	if modVersion == "(devel)" {
		modVersion = "devel"
	}
	for _, arg := range []string{"--version", "version"} {
		got, err := exec.Command(binary, arg).CombinedOutput()
		if err != nil {
			t.Fatalf("agentstream %s: %v\n%s", arg, err, got)
		}
		if !strings.HasPrefix(string(got), "agentstream "+modVersion+" ") {
			t.Errorf("agentstream %s = %q, want the module version %q", arg, got, modVersion)
		}
	}
}

func TestHelpGroupedWithDemoFirst(t *testing.T) {
	out, _, code := runCLI(t, "", "help")
	if code != exitOK {
		t.Fatalf("help exit %d", code)
	}
	var listed []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); strings.HasPrefix(l, "  ") && len(f) > 1 {
			if _, ok := commands[f[0]]; ok {
				listed = append(listed, f[0])
			}
		}
	}
	if len(listed) == 0 || listed[0] != "demo" {
		t.Errorf("first command in help %v, want demo", listed)
	}
	for name := range commands {
		if n := strings.Count(" "+strings.Join(listed, " ")+" ", " "+name+" "); n != 1 {
			t.Errorf("help lists %s %d times, want once", name, n)
		}
	}
	if groups := strings.Count(out, ":\n"); groups < 3 {
		t.Errorf("help has %d groups, want the commands grouped by task:\n%s", groups, out)
	}
}

// completionScript writes the script the binary prints for shell.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	out, err := exec.Command(binary, "completion", shell).Output()
	if err != nil {
		t.Fatalf("completion %s: %v", shell, err)
	}
	p := filepath.Join(t.TempDir(), "agentstream."+shell)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// renderFlags returns the flags render declares, from its flag set.
func renderFlags(t *testing.T) []string {
	t.Helper()
	for _, c := range completionCommands(context.Background(), commands) {
		if c.name == "render" {
			var names []string
			for _, f := range c.flags {
				names = append(names, "--"+f.name)
			}
			return names
		}
	}
	t.Fatal("no render command")
	return nil
}

func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := completionScript(t, "bash")
	complete := func(words ...string) []string {
		t.Helper()
		arr := ""
		for _, w := range words {
			arr += " '" + w + "'"
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + arr + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_agentstream\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	if got := complete("agentstream", "ren"); !slices.Equal(got, []string{"render", "renormalize"}) {
		t.Errorf("agentstream ren<TAB> = %v, want render renormalize", got)
	}
	if got := complete("agentstream", ""); len(got) != len(commands) {
		t.Errorf("agentstream <TAB> gives %d words, want the %d commands", len(got), len(commands))
	}
	if got, want := complete("agentstream", "render", "--"), renderFlags(t); !slices.Equal(got, want) {
		t.Errorf("agentstream render --<TAB> = %v, want %v", got, want)
	}
	got := complete("agentstream", "render", "--protocol", "")
	for _, p := range append([]string{"auto", "events"}, adapter.Names()...) {
		if !slices.Contains(got, p) {
			t.Errorf("agentstream render --protocol <TAB> = %v, lacks %s", got, p)
		}
	}
}

func TestCompletionFish(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish (apt-get install fish runs this test)")
	}
	script := completionScript(t, "fish")
	complete := func(line string) []string {
		t.Helper()
		out, err := exec.Command(fish, "--no-config", "-c", "source "+script+"; complete -C '"+line+"'").CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, out)
		}
		var words []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			w, _, _ := strings.Cut(l, "\t")
			words = append(words, w)
		}
		return words
	}
	if got := complete("agentstream ren"); !slices.Equal(got, []string{"render", "renormalize"}) {
		t.Errorf("agentstream ren<TAB> = %v, want render renormalize", got)
	}
	if got, want := complete("agentstream render --"), renderFlags(t); !slices.Equal(got, want) {
		t.Errorf("agentstream render --<TAB> = %v, want %v", got, want)
	}
	if got := complete("agentstream normalize --protocol "); !slices.Contains(got, "codex-json") {
		t.Errorf("agentstream normalize --protocol <TAB> = %v, lacks codex-json", got)
	}
}

func TestCompletionZsh(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("no zsh (apt-get install zsh runs this test)")
	}
	script := completionScript(t, "zsh")
	// Loading the script through compinit defines the completion function
	// and binds it to the command.
	prog := "autoload -Uz compinit && compinit -u -D && source " + script + " && print -r -- $_comps[agentstream] && whence -w _agentstream"
	out, err := exec.Command(zsh, "-f", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("zsh: %v\n%s", err, out)
	}
	if got := string(out); !strings.Contains(got, "_agentstream\n_agentstream: function") {
		t.Errorf("zsh did not bind _agentstream to agentstream:\n%s", got)
	}
}

func TestCompletionUnknownShell(t *testing.T) {
	_, stderr, code := runCLI(t, "", "completion", "tcsh")
	if code != exitUsage || !strings.Contains(stderr, "bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d, stderr %q", code, stderr)
	}
}

// TestDemoSaysWhatItDoes: the demo's first words come before its slow
// part (opening the store and importing), and name what it is doing.
func TestDemoSaysWhatItDoes(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	e := demoEnv(&out, &out, map[string]string{"TMPDIR": t.TempDir()})
	go func() { done <- cmdDemo(ctx, e, []string{"--no-live"}) }()
	poll(t, "the demo's URL", 30*time.Second, func() bool { return strings.Contains(out.String(), "open http://") })
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("demo exit %d:\n%s", code, out.String())
	}
	got := out.String()
	start, imp, open := strings.Index(got, "starting"), strings.Index(got, "importing"), strings.Index(got, "open http://")
	if start < 0 || imp < start || open < imp {
		t.Errorf("demo output does not say starting, then importing, then the URL:\n%s", got)
	}
	if first, _, _ := strings.Cut(got, "\n"); !strings.Contains(first, strconv.Itoa(len(demo.Imports()))+" recorded sessions") {
		t.Errorf("first line %q does not say how many recordings it imports", first)
	}
}
