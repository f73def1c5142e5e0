package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/modelsim"
)

var (
	update     = flag.Bool("lab.update", false, "write each run's stdout as a fixture of its adapter")
	harnessRE  = flag.String("lab.harness", "", "run only the harnesses whose name matches this regexp")
	scenarioRE = flag.String("lab.scenario", "", "run only the scenarios whose name matches this regexp")
	reportFile = flag.String("lab.report", "", "write the results as JSON to this file")
	parallel   = flag.Int("lab.parallel", 2, "how many harnesses run at once")
	driftFile  = flag.String("lab.drift", "", "write a drift report (Markdown) to this file: new native line types, raw share and failed checks per harness")
	keep       = flag.String("lab.keep", "", "keep each run's directory under this one, to look at after the run")
)

// envCache names the directory holding the harnesses' node_modules.
const envCache = "AGENTSTREAM_LAB"

// binary is the agentstream command, built once when the lab runs.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	var dir string
	if os.Getenv(envCache) != "" {
		var err error
		dir, err = os.MkdirTemp("", "agentstream-lab")
		if err != nil {
			panic(err)
		}
		binary = filepath.Join(dir, "agentstream")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/agentstream/agentstream/cmd/agentstream").CombinedOutput()
		if err != nil {
			panic("go build: " + err.Error() + "\n" + string(out))
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// A labCase is one scenario on one harness.
type labCase struct {
	h       modelsim.Harness
	s       *modelsim.Scenario
	cache   string
	version string
}

// A runOutput is what one run of agentstream run left.
type runOutput struct {
	base     string // the run's directory: home/, work/
	url      string
	exit     int
	events   []envelope
	spool    []byte
	console  string
	summary  runSummary
	records  []modelsim.Record
	simLog   string
	duration time.Duration
}

// envelope is an event as agentstream writes it.
type envelope struct {
	Seq          *int64         `json:"seq"`
	Turn         int            `json:"turn"`
	Harness      string         `json:"harness"`
	ParentCallID string         `json:"parentCallId"`
	Type         string         `json:"type"`
	Payload      map[string]any `json:"payload"`
	Source       *struct {
		Stream string `json:"stream"`
		Line   int    `json:"line"`
	} `json:"source"`
}

// runSummary is the part of run's --summary-json the checks read.
type runSummary struct {
	Status string            `json:"status"`
	Error  string            `json:"error"`
	Recap  agentstream.Recap `json:"recap"`
}

// binPath is where the cache holds a harness's executable.
func binPath(cache, name string) string {
	if name == "droid" {
		return filepath.Join(cache, "node_modules", "@factory", "cli-linux-x64", "bin", "droid")
	}
	return filepath.Join(cache, "node_modules", ".bin", name)
}

// version reads the installed version of a harness's package.
func version(cache, pkg string) string {
	b, err := os.ReadFile(filepath.Join(cache, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &p)
	return p.Version
}

// run runs the case once through agentstream run with protocol ("auto" or
// the harness's own).
func (lc *labCase) run(t *testing.T, protocol string) *runOutput {
	t.Helper()
	base := t.TempDir()
	if *keep != "" {
		var err error
		if base, err = os.MkdirTemp(*keep, lc.h.Name+"-"+lc.s.Name+"-"+protocol+"-"); err != nil {
			t.Fatal(err)
		}
	}
	home, work := filepath.Join(base, "home"), filepath.Join(base, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var simLog syncBuffer
	srv := modelsim.New(lc.s, modelsim.Options{Dir: work, Log: &simLog})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String()

	env := lc.h.Environment(url, home, work)
	for _, f := range env.Files {
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.Path, []byte(f.Content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := binPath(lc.cache, lc.h.Command[0])
	command := append([]string{bin}, lc.h.Command[1:]...)
	command = append(command, extraArgs(lc.h.Name, lc.s.Name)...)
	args := []string{"run", "--no-store", "--color", "never", "--ci", "none",
		"--events", filepath.Join(base, "events.jsonl"), "--spool", filepath.Join(base, "stdout.jsonl"),
		"--summary-json", filepath.Join(base, "summary.json"),
		"--idle-timeout", "150s", "--timeout", "300s", "--grace", "3s", "--approve", "all"}
	if protocol == "auto" {
		// Auto adds no flags and gives the prompt on stdin: the command
		// carries the protocol's flags, and its prompt where it wants one.
		command = agentstream.ApplyProtocol(command, lc.h.Protocol)
		p, _ := agentstream.LookupProtocol(lc.h.Protocol)
		args = append(args, "--protocol", "auto")
		if p.Prompt == agentstream.PromptArgument {
			command = agentstream.AppendPrompt(command, lc.h.Protocol, lc.s.Prompt)
		} else {
			args = append(args, "--prompt", lc.s.Prompt)
		}
	} else {
		args = append(args, "--protocol", protocol, "--prompt", lc.s.Prompt)
		for _, f := range lc.s.FollowUps {
			args = append(args, "--prompt", f)
		}
	}
	args = append(args, "--")
	args = append(args, command...)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = work
	cmd.Env = append(env.Env,
		"PATH="+filepath.Join(lc.cache, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TERM=dumb", "NO_COLOR=1", "LANG=C.UTF-8", "TMPDIR="+base,
	)
	var console bytes.Buffer
	cmd.Stdout, cmd.Stderr = &console, &console
	start := time.Now()
	err = cmd.Run()
	out := &runOutput{base: base, url: url, console: console.String(), duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		out.exit = ee.ExitCode()
	case err != nil:
		t.Fatalf("agentstream run: %v", err)
	}
	hs.Close()
	out.records = srv.Records()
	out.simLog = simLog.String()
	out.spool, _ = os.ReadFile(filepath.Join(base, "stdout.jsonl"))
	if b, err := os.ReadFile(filepath.Join(base, "summary.json")); err == nil {
		json.Unmarshal(b, &out.summary)
	}
	evs, err := os.ReadFile(filepath.Join(base, "events.jsonl"))
	if err != nil {
		t.Fatalf("no events: %v\n%s", err, out.console)
	}
	for _, line := range bytes.Split(evs, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e envelope
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("events: %v: %s", err, line)
		}
		out.events = append(out.events, e)
	}
	return out
}

// extraArgs are arguments a harness needs for one scenario: Claude Code
// 2.1.328 offers its plan tools only when --tools names them.
func extraArgs(harness, scenario string) []string {
	if (harness == "claude" || harness == "claude-stream") && scenario == "plan" {
		return []string{"--tools", "Bash,Edit,Read,Write,Agent,TaskCreate,TaskUpdate"}
	}
	return nil
}

// A result is the outcome of one check.
type result struct {
	Check  string `json:"check"`
	Status string `json:"status"` // pass, fail, na, known
	Detail string `json:"detail,omitempty"`
}

// Statuses of a result.
const (
	pass  = "pass"
	fail  = "fail"
	na    = "na"
	known = "known"
)

// An outcome is what the lab found for one harness and scenario.
type outcome struct {
	Harness  string   `json:"harness"`
	Version  string   `json:"version"`
	Scenario string   `json:"scenario"`
	Results  []result `json:"results"`
	// Lines and RawLines count the run's native stdout lines and those
	// that gave only raw events; RawTypes lists the native line types of
	// those that are not deliberately raw.
	Lines    int      `json:"lines"`
	RawLines int      `json:"rawLines"`
	RawTypes []string `json:"rawTypes,omitempty"`
	// LineTypes are the native line types the run printed.
	LineTypes []string `json:"lineTypes,omitempty"`
	Seconds   float64  `json:"seconds"`
}

// status sums up an outcome: fail if any check failed, else known if any
// is known, else na when nothing passed, else pass.
func (o *outcome) status() string {
	st := na
	for _, r := range o.Results {
		switch {
		case r.Status == fail:
			return fail
		case r.Status == known:
			st = known
		case r.Status == pass && st == na:
			st = pass
		}
	}
	return st
}

type collector struct {
	mu       sync.Mutex
	outcomes []*outcome
}

func (c *collector) add(o *outcome) {
	c.mu.Lock()
	c.outcomes = append(c.outcomes, o)
	c.mu.Unlock()
}

func TestLab(t *testing.T) {
	cache := os.Getenv(envCache)
	if cache == "" {
		t.Skipf("%s is not set: scripts/lab installs the pinned harness CLIs and runs the lab", envCache)
	}
	scenarios, err := modelsim.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	hre, sre := regexp.MustCompile(*harnessRE), regexp.MustCompile(*scenarioRE)
	sem := make(chan struct{}, max(*parallel, 1))
	var col collector
	start := time.Now()
	t.Run("run", func(t *testing.T) {
		for _, h := range modelsim.Harnesses() {
			if !hre.MatchString(h.Name) {
				continue
			}
			bin := binPath(cache, h.Command[0])
			ver := version(cache, h.Package)
			for _, s := range scenarios {
				if !sre.MatchString(s.Name) {
					continue
				}
				lc := &labCase{h: h, s: s, cache: cache, version: ver}
				t.Run(h.Name+"/"+s.Name, func(t *testing.T) {
					if _, err := os.Stat(bin); err != nil {
						t.Skipf("%s is not installed in %s (%v): run scripts/lab", h.Title, cache, err)
					}
					if reason := notApplicable(h, s); reason != "" {
						col.add(&outcome{Harness: h.Name, Version: ver, Scenario: s.Name, Results: []result{{"scenario", na, reason}}})
						t.Skip(reason)
					}
					t.Parallel()
					sem <- struct{}{}
					defer func() { <-sem }()
					o := lc.check(t)
					col.add(o)
				})
			}
		}
	})
	wall := time.Since(start)
	report(t, col.outcomes, wall)
	if *update {
		writeSources(t)
	}
	if *driftFile != "" {
		writeDrift(t, col.outcomes, wall)
	}
}

// check runs a case and checks it, reporting each failed check as an error
// that names the harness, the scenario and the check.
func (lc *labCase) check(t *testing.T) *outcome {
	out := lc.run(t, lc.h.Protocol)
	o := &outcome{Harness: lc.h.Name, Version: lc.version, Scenario: lc.s.Name, Seconds: out.duration.Seconds()}
	c := &checker{lc: lc, out: out}
	o.Results = c.all()
	if auto := autoReason(lc.h, lc.s); auto == "" {
		autoOut := lc.run(t, "auto")
		o.Results = append(o.Results, c.sameAsAuto(autoOut))
	} else if lc.s.Name == autoScenario {
		o.Results = append(o.Results, result{"auto", na, auto})
	}
	o.Lines, o.RawLines, o.RawTypes, o.LineTypes = c.rawCounts()
	for i, r := range o.Results {
		if r.Status == fail {
			if k := knownDefect(lc.h.Name, lc.s.Name, r.Check); k != "" {
				o.Results[i].Status = known
				o.Results[i].Detail = k + " (" + r.Detail + ")"
			}
		}
	}
	failed := false
	for _, r := range o.Results {
		switch r.Status {
		case fail:
			failed = true
			t.Errorf("lab: harness %s, scenario %s, check %s: %s", lc.h.Name, lc.s.Name, r.Check, r.Detail)
		case known:
			t.Logf("lab: harness %s, scenario %s, check %s: known: %s", lc.h.Name, lc.s.Name, r.Check, r.Detail)
		case na:
			t.Logf("lab: harness %s, scenario %s, check %s: not applicable: %s", lc.h.Name, lc.s.Name, r.Check, r.Detail)
		}
	}
	if failed {
		t.Logf("console of the run:\n%s\nsimulator log:\n%s", clip(out.console, 6000), clip(out.simLog, 4000))
	}
	if *update {
		lc.capture(t, out)
	}
	return o
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + "\n…\n" + s[len(s)-n/2:]
}

// report prints the table harness × scenario and writes the JSON report.
func report(t *testing.T, outcomes []*outcome, wall time.Duration) {
	if len(outcomes) == 0 {
		return
	}
	sort.Slice(outcomes, func(i, j int) bool {
		if outcomes[i].Harness != outcomes[j].Harness {
			return harnessIndex(outcomes[i].Harness) < harnessIndex(outcomes[j].Harness)
		}
		return outcomes[i].Scenario < outcomes[j].Scenario
	})
	var b strings.Builder
	fmt.Fprintf(&b, "lab: %d runs in %s\n", len(outcomes), wall.Round(time.Second))
	fmt.Fprintf(&b, "%-14s %-13s %-7s %6s  %s\n", "harness", "scenario", "status", "raw", "checks not passed")
	for _, o := range outcomes {
		raw := "-"
		if o.Lines > 0 {
			raw = fmt.Sprintf("%d%%", 100*o.RawLines/o.Lines)
		}
		var notes []string
		for _, r := range o.Results {
			if r.Status != pass {
				notes = append(notes, r.Status+":"+r.Check)
			}
		}
		fmt.Fprintf(&b, "%-14s %-13s %-7s %6s  %s\n", o.Harness, o.Scenario, o.status(), raw, strings.Join(notes, " "))
	}
	t.Log("\n" + b.String())
	if *reportFile != "" {
		data, err := json.MarshalIndent(map[string]any{"wallSeconds": wall.Seconds(), "outcomes": outcomes}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*reportFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func harnessIndex(name string) int {
	for i, h := range modelsim.Harnesses() {
		if h.Name == name {
			return i
		}
	}
	return len(name)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
