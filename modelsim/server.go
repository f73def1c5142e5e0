package modelsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Kinds of a Record.
const (
	// KindCall: a request answered by a call of the scenario.
	KindCall = "call"
	// KindSide: a request made beside the conversation (a title, a route, a
	// token count), answered without the scenario, with no usage.
	KindSide = "side"
	// KindRefused: a request the scenario has no answer for; it got an API
	// error, and Reason says why.
	KindRefused = "refused"
)

// Threads of a Record.
const (
	ThreadMain     = "main"
	ThreadSubagent = "subagent"
)

// A Record is one request the server received and what it answered.
type Record struct {
	// Seq numbers the requests from 1 in the order they arrived.
	Seq int `json:"seq"`
	// Time is when the request arrived.
	Time time.Time `json:"time"`
	// API is one of the API constants, or "" for a path no API has.
	API    string      `json:"api"`
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
	// Body is the request's body (written in JSON as itself when it is
	// JSON, else as a string).
	Body []byte `json:"-"`

	// Kind is KindCall, KindSide or KindRefused.
	Kind string `json:"kind"`
	// Thread is the conversation a call belongs to: ThreadMain or
	// ThreadSubagent.
	Thread string `json:"thread,omitempty"`
	// Call is the 1-based index of the scenario call that answered, in its
	// thread's list.
	Call int `json:"call,omitempty"`
	// Status is the HTTP status answered.
	Status int `json:"status"`
	// Reply is what was answered.
	Reply Reply `json:"reply"`
	// Reason says why a side call was taken for one, or why a request was
	// refused.
	Reason string `json:"reason,omitempty"`
}

// MarshalJSON writes the record with its body as JSON when it is JSON.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	body := json.RawMessage(r.Body)
	if !json.Valid(r.Body) {
		body, _ = json.Marshal(string(r.Body))
	}
	return json.Marshal(struct {
		plain
		Body json.RawMessage `json:"body"`
	}{plain(r), body})
}

// Reply is what the server answered a request.
type Reply struct {
	Thinking string     `json:"thinking,omitempty"`
	Text     string     `json:"text,omitempty"`
	Tools    []SentTool `json:"tools,omitempty"`
	// Error is the error answered, if any.
	Error *APIError `json:"error,omitempty"`
	// Usage is the usage reported, in agentstream's meaning.
	Usage Usage `json:"usage"`
}

// A Server answers model API requests from a scenario. Create it with New;
// it is an http.Handler, safe for concurrent use.
type Server struct {
	scenario *Scenario
	// dir is the harness's working directory: relative paths of a
	// scenario are made absolute against it.
	dir     string
	log     io.Writer
	observe func(Record)

	mu      sync.Mutex
	records []Record
	used    map[string][]int // per thread, the requests each call answered
	ids     int
}

// Options configure a Server. The zero value is useful.
type Options struct {
	// Dir is the harness's working directory, against which the relative
	// paths of a scenario are made absolute.
	Dir string
	// Log receives a line for each request that got no answer and why,
	// and for each side call; nil discards them.
	Log io.Writer
	// Observe, when set, is called with each request's record once it was
	// answered, from the request's goroutine.
	Observe func(Record)
}

// New returns a server that plays s.
func New(s *Scenario, opts Options) *Server {
	return &Server{scenario: s, dir: opts.Dir, log: opts.Log, observe: opts.Observe, used: map[string][]int{}}
}

// Records returns what the server received so far, in order. The records
// are copies.
func (s *Server) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, len(s.records))
	copy(out, s.records)
	return out
}

// Calls returns the records of the requests a scenario call answered.
func (s *Server) Calls() []Record {
	var out []Record
	for _, r := range s.Records() {
		if r.Kind == KindCall {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) logf(format string, a ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, "modelsim: "+format+"\n", a...)
	}
}

// maxBody bounds a request body.
const maxBody = 256 << 20

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	rec := Record{Time: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
	api, op, model := route(r)
	rec.API = api
	switch {
	case err != nil:
		s.refuse(w, &rec, http.StatusBadRequest, "reading the body: "+err.Error())
	case len(body) > maxBody:
		s.refuse(w, &rec, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", maxBody))
	case api == "" && op == "models":
		s.side(&rec, "model list")
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "modelsim", "object": "model", "created": 0, "owned_by": "modelsim"},
		}})
		rec.Status = http.StatusOK
	case op == "probe":
		// A client checking that the server is up (claude-agent-acp asks
		// HEAD /).
		s.side(&rec, "a probe of the server")
		writeJSON(w, http.StatusOK, map[string]any{})
		rec.Status = http.StatusOK
	case api == "":
		s.refuse(w, &rec, http.StatusNotFound, "no API has the path "+r.Method+" "+r.URL.Path)
	default:
		s.answer(w, r, &rec, op, model)
	}
	s.mu.Lock()
	rec.Seq = len(s.records) + 1
	s.records = append(s.records, rec)
	s.mu.Unlock()
	if s.observe != nil {
		s.observe(rec)
	}
}

// route names the API and the operation of a request: "messages",
// "count", "models", or for Gemini "generate" and "stream".
func route(r *http.Request) (api, op, model string) {
	p := r.URL.Path
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if strings.HasSuffix(p, "/models") {
			return "", "models", ""
		}
		return "", "probe", ""
	}
	if r.Method != http.MethodPost {
		return "", "", ""
	}
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return APIAnthropic, "count", ""
	case strings.HasSuffix(p, "/messages"):
		return APIAnthropic, "messages", ""
	case strings.HasSuffix(p, "/responses"):
		return APIResponses, "messages", ""
	case strings.HasSuffix(p, "/chat/completions"):
		return APIChat, "messages", ""
	}
	if i := strings.Index(p, "/models/"); i >= 0 {
		rest := p[i+len("/models/"):]
		if j := strings.LastIndexByte(rest, ':'); j > 0 {
			model = rest[:j]
			switch rest[j+1:] {
			case "generateContent":
				return APIGemini, "generate", model
			case "streamGenerateContent":
				return APIGemini, "stream", model
			case "countTokens":
				return APIGemini, "count", model
			}
		}
	}
	return "", "", ""
}

func (s *Server) side(rec *Record, reason string) {
	rec.Kind, rec.Reason = KindSide, reason
	s.logf("request %s %s: side call: %s", rec.Method, rec.Path, reason)
}

// refuse answers an error in the API's own error JSON, and logs why.
func (s *Server) refuse(w http.ResponseWriter, rec *Record, status int, reason string) {
	rec.Kind, rec.Reason, rec.Status = KindRefused, reason, status
	e := &APIError{Status: status, Message: "modelsim: " + reason}
	rec.Reply.Error = e
	s.logf("request %s %s: refused: %s", rec.Method, rec.Path, reason)
	writeError(w, rec.API, e)
}

// answer answers a request of one of the APIs.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, rec *Record, op, model string) {
	var c *conv
	var err error
	switch rec.API {
	case APIAnthropic:
		c, err = parseAnthropic(rec.Body)
	case APIChat:
		c, err = parseChat(rec.Body)
	case APIResponses:
		c, err = parseResponses(rec.Body)
	case APIGemini:
		c, err = parseGemini(rec.Body, model, op == "stream")
	}
	if err != nil {
		s.refuse(w, rec, http.StatusBadRequest, err.Error())
		return
	}
	if op == "count" {
		s.side(rec, "token count")
		rec.Status = http.StatusOK
		n := int64(len(rec.Body) / 4)
		if rec.API == APIGemini {
			writeJSON(w, http.StatusOK, map[string]any{"totalTokens": n})
		} else {
			writeJSON(w, http.StatusOK, map[string]any{"input_tokens": n})
		}
		return
	}
	var reply Reply
	switch {
	case c.wantJSON:
		s.side(rec, "the request asks for JSON output")
		b := instance(c.schema)
		reply.Text = string(b)
	case len(c.tools) == 0:
		s.side(rec, "the request offers no tools")
		reply.Text = "modelsim"
	case c.forced && len(c.tools) == 1:
		// A structured answer through the one tool offered (Qwen Code's
		// permission classifier calls respond_in_schema).
		s.side(rec, "the request makes the model call its one tool, "+c.tools[0].name)
		t := c.tools[0]
		reply.Tools = []SentTool{{Name: t.name, ID: s.callID(rec.API), Input: instance(t.schema)}}
	default:
		var ok bool
		reply, ok = s.script(w, r, rec, c)
		if !ok {
			return
		}
	}
	if reply.Error != nil {
		rec.Reply = reply
		rec.Status = reply.Error.Status
		writeError(w, rec.API, reply.Error)
		return
	}
	rec.Reply = reply
	rec.Status = http.StatusOK
	s.mu.Lock()
	s.ids++
	id := s.ids
	s.mu.Unlock()
	resp := response{conv: c, reply: reply, id: id}
	switch rec.API {
	case APIAnthropic:
		writeAnthropic(w, resp)
	case APIChat:
		writeChat(w, resp)
	case APIResponses:
		writeResponses(w, resp)
	case APIGemini:
		writeGemini(w, resp)
	}
}

// script takes the scenario call that answers the request and builds its
// reply; false means the request was refused.
func (s *Server) script(w http.ResponseWriter, r *http.Request, rec *Record, c *conv) (Reply, bool) {
	thread, calls := ThreadMain, s.scenario.Calls
	if sub := s.scenario.Subagent; sub != nil && strings.Contains(c.user, sub.Marker) {
		thread, calls = ThreadSubagent, sub.Calls
	}
	rec.Thread = thread
	s.mu.Lock()
	used := s.used[thread]
	if used == nil {
		used = make([]int, len(calls))
		s.used[thread] = used
	}
	idx := -1
	for i := range calls {
		if (used[i] < max(calls[i].Times, 1) || calls[i].Always) && calls[i].If.matches(c) {
			idx = i
			break
		}
	}
	if idx >= 0 {
		used[idx]++
	}
	s.mu.Unlock()
	if idx < 0 {
		s.refuse(w, rec, http.StatusBadRequest, fmt.Sprintf("scenario %s has no unused %s call that matches request (%d tool results)",
			s.scenario.Name, thread, c.toolResults))
		return Reply{}, false
	}
	call := &calls[idx]
	rec.Kind, rec.Call = KindCall, idx+1
	if call.DelayMs > 0 {
		select {
		case <-time.After(time.Duration(call.DelayMs) * time.Millisecond):
		case <-r.Context().Done():
		}
	}
	if call.Error != nil {
		e := call.Error.For(rec.API)
		rec.Reply = Reply{Error: e}
		return Reply{Error: e}, true
	}
	reply := Reply{Thinking: call.Thinking, Text: call.Text, Usage: call.Usage}
	for j := range call.Tools {
		sent, err := call.Tools[j].calls(c, s.dir, func() string { return s.callID(rec.API) })
		if err != nil {
			who := ""
			if thread == ThreadSubagent {
				who = ": subagent"
			}
			s.refuse(w, rec, http.StatusBadRequest, fmt.Sprintf("scenario %s%s: call %d: tool %d: %v", s.scenario.Name, who, idx+1, j+1, err))
			rec.Kind, rec.Call = KindRefused, idx+1
			return Reply{}, false
		}
		reply.Tools = append(reply.Tools, sent...)
	}
	if thread == ThreadSubagent && len(reply.Tools) == 0 && reply.Text != "" {
		// A subagent that must report through a tool (Gemini CLI's
		// complete_task) reports its text there.
		if t, ok := finishTool(c.tools); ok {
			in := object(t.schema, func(name string, p *schema) (any, bool) {
				if p.is("string") || len(p.types) == 0 {
					return reply.Text, true
				}
				return nil, false
			})
			reply.Tools = append(reply.Tools, SentTool{Role: RoleFinish, Name: t.name, ID: s.callID(rec.API), Input: in})
		}
	}
	return reply, true
}

// finishTool returns the tool a subagent must call to report its result,
// when the request offers one.
func finishTool(tools []tool) (tool, bool) {
	for _, t := range tools {
		if !t.custom && (key(t.name) == "completetask" || key(t.name) == "submitresult" || key(t.name) == "finish") {
			return t, true
		}
	}
	return tool{}, false
}

// callID names a tool call in the API's style.
func (s *Server) callID(api string) string {
	s.mu.Lock()
	s.ids++
	n := s.ids
	s.mu.Unlock()
	switch api {
	case APIAnthropic:
		return fmt.Sprintf("toolu_modelsim_%04d", n)
	case APIGemini:
		return fmt.Sprintf("modelsim-call-%04d", n)
	}
	return fmt.Sprintf("call_modelsim_%04d", n)
}

// matches reports whether a request fits the condition; nil fits all.
func (cd *Condition) matches(c *conv) bool {
	if cd == nil {
		return true
	}
	if cd.UserText != "" && !strings.Contains(c.user, cd.UserText) {
		return false
	}
	if cd.System != "" && !strings.Contains(c.system, cd.System) {
		return false
	}
	if cd.ToolResults != nil && *cd.ToolResults != c.toolResults {
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Listen serves s on addr (host:port, ":0" for a free port of 127.0.0.1)
// until ctx ends, and calls ready with the bound address once it listens.
func Listen(ctx context.Context, addr string, s http.Handler, ready func(net.Addr)) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("modelsim: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr())
	}
	errCh := make(chan error, 1)
	go func() { errCh <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	case err := <-errCh:
		return fmt.Errorf("modelsim: %w", err)
	}
}
