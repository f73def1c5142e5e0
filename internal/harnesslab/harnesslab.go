// Package harnesslab sets up runs of the real harness CLIs against the model
// simulator, for the tests that prove the drivers and the sessions on them:
// where the pinned CLIs are (the directory AGENTSTREAM_LAB names, as for the
// lab), a fresh HOME and working directory, a modelsim server playing a
// scenario, and the environment a harness needs to reach it.
package harnesslab

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentstream/agentstream/modelsim"
)

// EnvCache names the variable holding the directory of the harnesses'
// node_modules, as for the lab.
const EnvCache = "AGENTSTREAM_LAB"

// Cache returns the harness cache directory, or why there is none.
func Cache() (string, error) {
	dir := os.Getenv(EnvCache)
	if dir == "" {
		return "", errors.New(EnvCache + " is not set: no real harness to run (set it to the directory holding node_modules of the pinned CLIs)")
	}
	return dir, nil
}

// Bin returns where the cache holds a harness's executable, or why it does
// not.
func Bin(cache, name string) (string, error) {
	p := filepath.Join(cache, "node_modules", ".bin", name)
	if name == "droid" {
		p = filepath.Join(cache, "node_modules", "@factory", "cli-linux-x64", "bin", "droid")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("harnesslab: %s is not installed in %s: %w", name, cache, err)
	}
	return p, nil
}

// A Run is the setting of one harness run: its directories, the simulator
// and the environment.
type Run struct {
	Home, Work string
	// URL is the simulator's base URL.
	URL string
	// Sim is the simulator, whose Records say what the harness asked.
	Sim *modelsim.Server
	// Env is the harness's whole environment.
	Env []string
	// Log is what the simulator said of requests it did not answer.
	Log *SyncBuffer

	srv *http.Server
}

// Start makes base/home and base/work, serves the scenario on a free port
// of 127.0.0.1, and writes the harness's configuration files.
func Start(base string, h modelsim.Harness, s *modelsim.Scenario, cache string) (*Run, error) {
	r := &Run{Home: filepath.Join(base, "home"), Work: filepath.Join(base, "work"), Log: &SyncBuffer{}}
	for _, d := range []string{r.Home, r.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	r.Sim = modelsim.New(s, modelsim.Options{Dir: r.Work, Log: r.Log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.srv = &http.Server{Handler: r.Sim, ReadHeaderTimeout: 10 * time.Second}
	// The server's goroutine returns once Close shut it.
	go r.srv.Serve(ln)
	r.URL = "http://" + ln.Addr().String()
	env := h.Environment(r.URL, r.Home, r.Work)
	for _, f := range env.Files {
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			r.Close()
			return nil, err
		}
		if err := os.WriteFile(f.Path, []byte(f.Content), 0o644); err != nil {
			r.Close()
			return nil, err
		}
	}
	r.Env = append(env.Env,
		"PATH="+filepath.Join(cache, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TERM=dumb", "NO_COLOR=1", "LANG=C.UTF-8", "TMPDIR="+base,
	)
	return r, nil
}

// Close stops the simulator.
func (r *Run) Close() {
	if r.srv != nil {
		r.srv.Close()
	}
}

// SyncBuffer is a buffer safe for concurrent use.
type SyncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	b.mu.Unlock()
	return len(p), nil
}

// String returns what was written.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

var _ io.Writer = (*SyncBuffer)(nil)
