package api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

// TestIngestRedact sends lines with secrets to a server with a Redactor:
// the stored lines are the masked lines, and the events made of them hold
// the same masks and no secret.
func TestIngestRedact(t *testing.T) {
	red := redact.New(redact.Options{Key: []byte("k")})
	ts := newServer(t, api.Options{Redact: red}, hub.Options{})
	ctx := context.Background()
	c := &api.Client{URL: ts.srv.URL}
	sess, err := c.CreateSession(ctx, api.CreateRequest{Protocol: "claude-json"})
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","cwd":"/w","tools":["Bash"]}`,
		`{"type":"assistant","message":{"id":"msg_01","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Using GITHUB_TOKEN=ghp_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO now"}]},"session_id":"s1"}`,
	}
	var in []api.LineIn
	for i, l := range lines {
		in = append(in, api.LineIn{Stream: store.Stdout, N: int64(i + 1), Text: l})
	}
	in = append(in, api.LineIn{Stream: store.Stderr, N: 1, Text: "PASSWORD=s3cr3t-pw"})
	code := 0
	if _, err := c.PostLines(ctx, sess.ID, in, &api.End{ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := ts.st.Lines(ctx, sess.ID, func(l store.Line) error {
		got = append(got, string(l.Data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{lines[0], string(red.Line([]byte(lines[1]))), string(red.Line([]byte("PASSWORD=s3cr3t-pw")))}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stored lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mask := want[1][strings.Index(want[1], "ghp_") : strings.Index(want[1], "ghp_")+40]
	evs, err := ts.st.Events(ctx, sess.ID, store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, e := range evs {
		all = append(all, e.Data...)
	}
	if bytes.Contains(all, []byte("R8nQz3XkL0")) || bytes.Contains(all, []byte("s3cr3t")) {
		t.Errorf("an event holds a secret: %s", all)
	}
	if !bytes.Contains(all, []byte(mask)) {
		t.Errorf("no event holds the mask %s of the native line", mask)
	}
}
