package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

// getUsage serves GET /api/usage: the stored sessions' usage grouped by
// by (day, the default, week, month, model, harness, project or session),
// the sessions started in [since, until) (RFC 3339 times or dates), days
// told in the time zone tz (an IANA name; UTC by default). The body is an
// agentstream.UsageReport: {"by", "rows", "total"}.
func (s *server) getUsage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	opt := agentstream.UsageReportOptions{By: q.Get("by"), Location: time.UTC}
	if opt.By == "" {
		opt.By = agentstream.ByDay
	}
	if tz := q.Get("tz"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad tz "+strconv.Quote(tz)+": want an IANA time zone such as Europe/Paris")
			return
		}
		opt.Location = loc
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &opt.Since}, {"until", &opt.Until}} {
		raw := q.Get(p.name)
		if raw == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			t, err = time.ParseInLocation("2006-01-02", raw, opt.Location)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad "+p.name+" "+strconv.Quote(raw)+": want an RFC 3339 time or a date (2026-11-29)")
			return
		}
		*p.dst = t
	}
	if _, err := agentstream.NewUsageReport(nil, opt); err != nil {
		writeError(w, http.StatusBadRequest, "bad by "+strconv.Quote(opt.By)+": want one of "+strings.Join(agentstream.UsageGroupings, ", "))
		return
	}
	rep, err := store.UsageReport(r.Context(), s.st, opt)
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
