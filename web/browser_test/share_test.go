package browser_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// TestShareLinkPage opens a session's share link in chromium: the session
// page shows the session, the secret leaves the address bar, another
// session's page is refused with the reason, and once the link is revoked
// the page says so.
func TestShareLinkPage(t *testing.T) {
	chrome := findChromium(t)
	srv := startServerWith(t, func(st *sqlite.Store) api.Options {
		return api.Options{Token: "admin-sekrit", Tokens: st}
	})
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for id, text := range map[string]string{"s_shared": "the shared answer", "s_other": "the other answer"} {
		w, err := session(ctx, srv.st, id, start,
			&agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-5"},
			&agentstream.Message{Role: agentstream.RoleAssistant, Text: text},
			&agentstream.SessionEnded{Status: agentstream.StatusSucceeded})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	secret, link, err := api.NewShare(ctx, srv.st, "s_shared", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tb := startBrowser(t, chrome).tab(t)
	tb.open(srv.url+api.SharePath("s_shared", secret), byID("e3"))
	if text := eval[string](tb, `document.getElementById('timeline').textContent`); !strings.Contains(text, "the shared answer") {
		t.Errorf("the shared session's page shows %q, want its message", text)
	}
	if hash := eval[string](tb, `location.href`); strings.Contains(hash, secret) {
		t.Errorf("the secret stayed in the address bar: %s", hash)
	}
	refused := `!document.getElementById('error').hidden`
	tb.open(srv.url+"/sessions/s_other", refused)
	if msg := eval[string](tb, `document.getElementById('error').textContent`); !strings.Contains(msg, "reads only session s_shared") {
		t.Errorf("another session's page with the link says %q, want the refusal", msg)
	}
	if eval[bool](tb, `!!document.querySelector('#timeline .event[data-seq]')`) {
		t.Errorf("another session's events are shown with the share link")
	}
	if _, err := api.RevokeShare(ctx, srv.st, link.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	tb.open(srv.url+"/sessions/s_shared", refused)
	if msg := eval[string](tb, `document.getElementById('error').textContent`); !strings.Contains(msg, "revoked") {
		t.Errorf("the page of a revoked link says %q, want revoked", msg)
	}
}
