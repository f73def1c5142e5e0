package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/web/api"
	"github.com/google/go-cmp/cmp"
)

// TestHealth reads GET /api/health with and without an ingest status.
func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		health func() any
		want   map[string]any
	}{
		{"http only", nil, map[string]any{"ok": true, "ingest": map[string]any{"transport": "http"}}},
		{"nats paused", func() any { return map[string]string{"transport": "nats", "state": "paused"} },
			map[string]any{"ok": true, "ingest": map[string]any{"transport": "nats", "state": "paused"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, api.Options{Health: tc.health}, hub.Options{})
			resp, err := http.Get(ts.srv.URL + "/api/health")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("health (-want +got):\n%s", d)
			}
		})
	}
}
