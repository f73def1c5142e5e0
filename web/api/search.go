package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentstream/agentstream/store"
)

// A searcher is a store with full-text search over its events (both
// stores have it).
type searcher interface {
	Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, error)
}

// getSearch serves /api/search (GET only): the stored events whose text matches
// q (words all required, "quoted phrases", prefix*), latest first,
// filtered by harness, model, status, project (a working directory and
// what is under it), since and until (RFC 3339 times or dates, UTC),
// at most limit (1 to 500, default 50). The body is a JSON list of
// store.SearchHit; a query that cannot be read is a 400 saying why.
func (s *server) getSearch(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed("GET")(w, r)
		return
	}
	sr, ok := s.st.(searcher)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this store has no search")
		return
	}
	v := r.URL.Query()
	q := store.SearchQuery{Text: v.Get("q"), Harness: v.Get("harness"), Model: v.Get("model"),
		Status: v.Get("status"), Project: v.Get("project")}
	if _, set := v["q"]; !set {
		writeError(w, http.StatusBadRequest, "missing q: the words to search for")
		return
	}
	if q.Status != "" && !store.ValidStatus(q.Status) {
		writeError(w, http.StatusBadRequest, "bad status "+strconv.Quote(q.Status)+
			": want running, succeeded, failed, cancelled or interrupted")
		return
	}
	limit, _, ok := intParam(w, r, "limit", 1, 500)
	if !ok {
		return
	}
	q.Limit = int(limit)
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		raw := v.Get(p.name)
		if raw == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			t, err = time.Parse("2006-01-02", raw)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad "+p.name+" "+strconv.Quote(raw)+": want an RFC 3339 time or a date (2026-11-29)")
			return
		}
		*p.dst = t
	}
	hits, err := sr.Search(r.Context(), q)
	if errors.Is(err, store.ErrBadQuery) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, hits)
}
