package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Live is what the API needs of the live sessions it starts: harnesses of
// the server's own profiles, never a command a request names. Package
// session's Manager gives it, with the profiles of the configuration (the
// command wires them). Its errors wrap ErrNotFound, ErrConflict or
// ErrInvalid, which the API answers 404, 409 and 400; other errors are
// 500s. It must be safe for concurrent use.
type Live interface {
	// Profiles lists the profiles' names.
	Profiles() []string
	// Open starts a session of a profile and returns its id.
	Open(ctx context.Context, req OpenRequest) (string, error)
	// Send sends a message (mode queue, steer or interrupt) and returns
	// its id.
	Send(ctx context.Context, id string, req MessageRequest) (string, error)
	// Interrupt ends the running turn.
	Interrupt(ctx context.Context, id string) error
	// Answer answers a pending request.
	Answer(ctx context.Context, id, requestID string, req AnswerRequest) error
	// Close ends the session.
	Close(ctx context.Context, id string) error
	// Info returns what a live session is now (its state, its pending
	// requests), as a JSON object, and whether the session is one of the
	// live ones.
	Info(id string) (json.RawMessage, bool)
}

// Errors a Live wraps, to say which status a request gets.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid")
)

// OpenRequest is the body of POST /api/sessions that starts a live
// session: a profile of the server's, a first message, and a policy that
// replaces the profile's.
type OpenRequest struct {
	Profile string          `json:"profile"`
	Prompt  string          `json:"prompt,omitempty"`
	Policy  json.RawMessage `json:"policy,omitempty"`
}

// MessageRequest is the body of POST /api/sessions/{id}/messages.
type MessageRequest struct {
	Text string `json:"text"`
	// Mode is queue (the default), steer or interrupt.
	Mode string `json:"mode,omitempty"`
}

// AnswerRequest is the body of POST /api/sessions/{id}/requests/{requestId}.
type AnswerRequest struct {
	// Decision is allow, allow-always or deny.
	Decision string `json:"decision"`
	// Message is told to the agent with a denial.
	Message string `json:"message,omitempty"`
	// Answers are a question's answers: each question's text and the
	// chosen option's label, or free text.
	Answers map[string]string `json:"answers,omitempty"`
	// Option is the harness's own option id to answer with.
	Option string `json:"option,omitempty"`
}

// routeLive adds the routes of live sessions.
func (s *server) routeLive(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/sessions/{id}/messages", s.postMessage)
	mux.HandleFunc("/api/sessions/{id}/messages", methodNotAllowed("POST"))
	mux.HandleFunc("POST /api/sessions/{id}/interrupt", s.postInterrupt)
	mux.HandleFunc("/api/sessions/{id}/interrupt", methodNotAllowed("POST"))
	mux.HandleFunc("POST /api/sessions/{id}/requests/{requestId}", s.postAnswer)
	mux.HandleFunc("/api/sessions/{id}/requests/{requestId}", methodNotAllowed("POST"))
	mux.HandleFunc("DELETE /api/sessions/{id}", s.deleteSession)
	mux.HandleFunc("GET /api/profiles", s.getProfiles)
	mux.HandleFunc("/api/profiles", methodNotAllowed("GET"))
}

// liveError answers the error of a Live.
func liveError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrConflict):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// needLive answers 404 on a server that starts no sessions.
func (s *server) needLive(w http.ResponseWriter) bool {
	if s.opts.Live == nil {
		writeError(w, http.StatusNotFound, "this server starts no sessions (it has no profiles)")
		return false
	}
	return true
}

// readBody reads a request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "request body too large (the limit is "+strconv.FormatInt(limit, 10)+" bytes)")
		} else {
			writeError(w, http.StatusBadRequest, "bad request body: "+err.Error())
		}
		return nil, false
	}
	return b, true
}

// decodeBytes decodes a JSON body, refusing unknown keys and trailing data.
func decodeBytes(w http.ResponseWriter, b []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "bad request body: data after the JSON value")
		return false
	}
	return true
}

// isOpenRequest reports whether a POST /api/sessions body starts a live
// session (it names a profile) rather than announcing an ingestion.
func isOpenRequest(b []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) != nil {
		return false
	}
	_, ok := keys["profile"]
	return ok
}

func (s *server) openSession(w http.ResponseWriter, r *http.Request, b []byte) {
	if !s.needLive(w) {
		return
	}
	var req OpenRequest
	if !decodeBytes(w, b, &req) {
		return
	}
	if strings.TrimSpace(req.Profile) == "" {
		writeError(w, http.StatusBadRequest, "no profile: want one of "+strings.Join(s.opts.Live.Profiles(), ", "))
		return
	}
	id, err := s.opts.Live.Open(r.Context(), req)
	if err != nil {
		liveError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

func (s *server) postMessage(w http.ResponseWriter, r *http.Request) {
	if !s.needLive(w) {
		return
	}
	b, ok := readBody(w, r, maxSmallBody)
	if !ok {
		return
	}
	var req MessageRequest
	if !decodeBytes(w, b, &req) {
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		writeError(w, http.StatusBadRequest, "no text")
		return
	}
	switch req.Mode {
	case "", "queue", "steer", "interrupt":
	default:
		writeError(w, http.StatusBadRequest, "mode "+quoteText(req.Mode)+": want queue, steer or interrupt")
		return
	}
	id, err := s.opts.Live.Send(r.Context(), r.PathValue("id"), req)
	if err != nil {
		liveError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"messageId": id})
}

func (s *server) postInterrupt(w http.ResponseWriter, r *http.Request) {
	if !s.needLive(w) {
		return
	}
	if err := s.opts.Live.Interrupt(r.Context(), r.PathValue("id")); err != nil {
		liveError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{})
}

func (s *server) postAnswer(w http.ResponseWriter, r *http.Request) {
	if !s.needLive(w) {
		return
	}
	b, ok := readBody(w, r, maxSmallBody)
	if !ok {
		return
	}
	var req AnswerRequest
	if !decodeBytes(w, b, &req) {
		return
	}
	switch req.Decision {
	case "allow", "allow-always", "deny":
	default:
		writeError(w, http.StatusBadRequest, "decision "+quoteText(req.Decision)+": want allow, allow-always or deny")
		return
	}
	if err := s.opts.Live.Answer(r.Context(), r.PathValue("id"), r.PathValue("requestId"), req); err != nil {
		liveError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

func (s *server) deleteSession(w http.ResponseWriter, r *http.Request) {
	if !s.needLive(w) {
		return
	}
	if err := s.opts.Live.Close(r.Context(), r.PathValue("id")); err != nil {
		liveError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{})
}

func (s *server) getProfiles(w http.ResponseWriter, r *http.Request) {
	names := []string{}
	if s.opts.Live != nil {
		names = s.opts.Live.Profiles()
	}
	writeJSON(w, http.StatusOK, map[string]any{"profiles": names})
}

func quoteText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
