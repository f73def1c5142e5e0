package codex

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"bash single quotes", `"bash -lc 'cat sample.txt'"`, "cat sample.txt"},
		{"bash bare", `"bash -lc ls"`, "ls"},
		{"zsh path", `"/bin/zsh -lc 'rg -n \"CodexRunner\" packages'"`, `rg -n "CodexRunner" packages`},
		{"zsh double quotes heredoc", `"/bin/zsh -lc \"python - <<'PY'\nimport glob\nPY\""`, "python - <<'PY'\nimport glob\nPY"},
		{"escaped quote", `"bash -lc 'echo '\\''hi'\\'''"`, "echo 'hi'"},
		{"double quote escapes", `"zsh -lc \"echo \\\"a\\\" \\$HOME\""`, `echo "a" $HOME`},
		{"no wrapper", `"pytest -q"`, "pytest -q"},
		{"login then c", `"bash -l -c 'make test'"`, "make test"},
		{"argv wrapper", `["bash","-lc","ls -1"]`, "ls -1"},
		{"argv plain", `["git","commit","-m","a message"]`, "git commit -m 'a message'"},
		{"not a shell", `"bashful -lc x"`, "bashful -lc x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := commandLine([]byte(tc.in)); got != tc.want {
				t.Errorf("commandLine(%s) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRetry(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	f := func(n float64) *float64 { return &n }
	type retry struct {
		Attempt, Max, Status *int64
		Delay                *float64
	}
	for _, tc := range []struct {
		in   string
		want *retry
	}{
		{"Reconnecting... 2/5", &retry{Attempt: i(2), Max: i(5)}},
		{"Re-connecting... 1/5 (stream disconnected before completion)", &retry{Attempt: i(1), Max: i(5)}},
		{"stream error: exceeded retry limit, last status: 429 Too Many Requests; retrying 3/5 in 1.5s…", &retry{Attempt: i(3), Max: i(5), Delay: f(1500), Status: i(429)}},
		{"stream error: stream disconnected; retrying 1/5 in 211ms…", &retry{Attempt: i(1), Max: i(5), Delay: f(211)}},
		{"Reconnecting...", &retry{}},
		{"codex exec exited non-zero after turn.failed", nil},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r := parseRetry(tc.in)
			var got *retry
			if r != nil {
				got = &retry{Attempt: r.Attempt, Max: r.MaxRetries, Status: r.Status, Delay: r.DelayMs}
				if r.Error != tc.in {
					t.Errorf("error = %q, want the message", r.Error)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseRetry (-want +got):\n%s", diff)
			}
		})
	}
}
