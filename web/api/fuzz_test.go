package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// noLive is a Live that knows no session: enough for the API to parse the
// bodies of the live routes, which is what the fuzz targets exercise.
type noLive struct{}

func (noLive) Profiles() []string { return []string{"p"} }
func (noLive) Open(context.Context, api.OpenRequest) (string, error) {
	return "", api.ErrInvalid
}
func (noLive) Send(context.Context, string, api.MessageRequest) (string, error) {
	return "", api.ErrNotFound
}
func (noLive) Interrupt(context.Context, string) error { return api.ErrNotFound }
func (noLive) Answer(context.Context, string, string, api.AnswerRequest) error {
	return api.ErrNotFound
}
func (noLive) Close(context.Context, string) error { return api.ErrNotFound }
func (noLive) Info(string) (json.RawMessage, bool) { return nil, false }

// fuzzHandler is the API over a real store, with one remote session "r".
func fuzzHandler(f *testing.F) http.Handler {
	st, err := sqlite.OpenOptions(filepath.Join(f.TempDir(), "fuzz.db"), sqlite.Options{FlushInterval: time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	h := api.New(st, hub.New(hub.Options{}), api.Options{Live: noLive{}, MaxBody: 1 << 20, HeartbeatTimeout: -1})
	if code, body := fuzzPost(h, "/api/sessions", []byte(`{"id":"r","protocol":"claude-json"}`)); code != 201 {
		f.Fatalf("create: %d %s", code, body)
	}
	return h
}

func fuzzPost(h http.Handler, path string, body []byte) (int, string) {
	req := httptest.NewRequest("POST", "http://127.0.0.1:8377"+path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// checkAnswer holds what every answer to a fuzzed body must be: never a
// server error, and an error as a JSON object.
func checkAnswer(t *testing.T, path string, body []byte, code int, answer string) {
	t.Helper()
	if code >= 500 {
		t.Fatalf("%s %q: %d %s", path, body, code, answer)
	}
	if code >= 400 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(answer), &e) != nil || e.Error == "" {
			t.Fatalf("%s %q: %d without a JSON error: %s", path, body, code, answer)
		}
	}
}

func FuzzCreateSession(f *testing.F) {
	for _, s := range []string{
		`{"protocol":"claude-json"}`,
		`{"protocol":"codex-json","cwd":"/w","command":["codex","exec"],"labels":{"a":"b"},"harness":"codex"}`,
		`{"id":"x:1","protocol":"jsonl","parent":"r"}`,
		`{"protocol":"auto"}`, `{"protocol":"claude-json"} {}`, `{"profile":"p","prompt":"hi"}`,
		`{"profile":""}`, `{"id":"bad id","protocol":"jsonl"}`, `{"parent":"\u0000","protocol":"jsonl"}`,
		`[]`, `null`, ``, `{"protocol":1}`, `{"labels":{"":""},"protocol":"jsonl"}`,
	} {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		code, answer := fuzzPost(h, "/api/sessions", body)
		checkAnswer(t, "/api/sessions", body, code, answer)
	})
}

func FuzzPostLines(f *testing.F) {
	for _, s := range []string{
		`{"lines":[{"stream":"stdout","n":1,"text":"{\"type\":\"system\",\"subtype\":\"init\",\"model\":\"m\"}"}]}`,
		`{"lines":[{"stream":"stderr","n":1,"data":"/w=="}]}`,
		`{"lines":[{"stream":"stdout","n":2,"text":"x","size":99999,"sha256":"00"}]}`,
		`{"lines":[{"stream":"stdout","n":9,"text":"gap"}]}`,
		`{"lines":[],"end":{"exitCode":0}}`,
		`{"lines":[{"stream":"stdout","n":1,"text":"a","data":"YQ=="}]}`,
		`{"lines":[{"stream":"x","n":0}]}`, `{"lines":null}`, `{"lines":[]} x`, `{"end":{"reason":"deadline"}}`,
	} {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		code, answer := fuzzPost(h, "/api/sessions/r/lines", body)
		if code == 409 {
			return // out of order, or the session ended: a JSON error all the same
		}
		checkAnswer(t, "/api/sessions/r/lines", body, code, answer)
	})
}

func FuzzPostMessage(f *testing.F) {
	for _, s := range []string{`{"text":"hi"}`, `{"text":"hi","mode":"steer"}`, `{"text":" "}`, `{"text":"x","mode":"later"}`, `{}`, `{"text":"a"}{}`} {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		code, answer := fuzzPost(h, "/api/sessions/r/messages", body)
		checkAnswer(t, "/api/sessions/r/messages", body, code, answer)
	})
}

func FuzzPostAnswer(f *testing.F) {
	for _, s := range []string{`{"decision":"allow"}`, `{"decision":"deny","message":"no"}`, `{"decision":"allow","answers":{"q":"a"},"option":"o"}`, `{"decision":"maybe"}`, `{"decision":1}`} {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		code, answer := fuzzPost(h, "/api/sessions/r/requests/q1", body)
		checkAnswer(t, "/api/sessions/r/requests/q1", body, code, answer)
	})
}
