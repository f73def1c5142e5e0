package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestPages(t *testing.T) {
	h := Handler()
	tests := []struct {
		name, path, wantScript string
	}{
		{"sessions list", "/", "/static/list.js"},
		{"session", "/sessions/s_01JD", "/static/session.js"},
		{"session with escaped id", "/sessions/a%2Fb", "/static/session.js"},
		{"usage", "/usage", "/static/usage.js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, tt.path, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: status %d, want 200", tt.path, rec.Code)
			}
			for k, want := range map[string]string{
				"Content-Type":            "text/html; charset=utf-8",
				"Content-Security-Policy": ContentSecurityPolicy,
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
				"Cache-Control":           "no-cache",
			} {
				if got := rec.Header().Get(k); got != want {
					t.Errorf("GET %s: %s = %q, want %q", tt.path, k, got, want)
				}
			}
			body := rec.Body.String()
			if !strings.Contains(body, `src="`+tt.wantScript+`"`) {
				t.Errorf("GET %s: page does not load %s", tt.path, tt.wantScript)
			}
		})
	}
}

func TestCSP(t *testing.T) {
	for _, directive := range []string{
		"default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
		"connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'",
	} {
		if !strings.Contains(ContentSecurityPolicy, directive) {
			t.Errorf("Content-Security-Policy lacks %q", directive)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe") {
		t.Errorf("Content-Security-Policy allows something unsafe: %s", ContentSecurityPolicy)
	}
}

func TestAssets(t *testing.T) {
	h := Handler()
	tests := []struct {
		path, contentType string
	}{
		{"/static/style.css", "text/css; charset=utf-8"},
		{"/static/common.js", "text/javascript; charset=utf-8"},
		{"/static/list.js", "text/javascript; charset=utf-8"},
		{"/static/session.js", "text/javascript; charset=utf-8"},
		{"/static/markdown.js", "text/javascript; charset=utf-8"},
		{"/static/highlight.js", "text/javascript; charset=utf-8"},
		{"/static/usage.js", "text/javascript; charset=utf-8"},
		{"/static/favicon.svg", "image/svg+xml"},
		{"/static/index.html", "text/html; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, tt.path, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", rec.Code)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
			}
			if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control = %q, want no-cache", got)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			etag := rec.Header().Get("ETag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			again := get(t, h, http.MethodGet, tt.path, http.Header{"If-None-Match": {etag}})
			if again.Code != http.StatusNotModified {
				t.Errorf("revalidation with the ETag: status %d, want 304", again.Code)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	h := Handler()
	for _, path := range []string{
		"/nope", "/index.html", "/sessions", "/sessions/", "/sessions/x/y", "/static/",
		"/static/missing.js", "/static/static/style.css", "/favicon.ico", "/api/sessions",
	} {
		t.Run(path, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, path, nil)
			if rec.Code != http.StatusNotFound {
				t.Errorf("GET %s: status %d, want 404", path, rec.Code)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options = %q", path, got)
			}
			if strings.HasPrefix(path, "/api/") {
				return
			}
			// A page a person can read, with the way back to the list.
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q, want an HTML page", path, ct)
			}
			if body := rec.Body.String(); !strings.Contains(body, `<a class="back-link" href="/">`) || !strings.Contains(body, "not found") {
				t.Errorf("GET %s: the page has no link back to the sessions list:\n%s", path, body)
			}
		})
	}
	// The mux redirects a path with dot segments to its clean form.
	if rec := get(t, h, http.MethodGet, "/static/../ui.go", nil); rec.Code == http.StatusOK {
		t.Errorf("GET /static/../ui.go: status 200")
	}
	rec := get(t, h, http.MethodGet, "/api/anything", nil)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("404 under /api/: Content-Type %q, want application/json", ct)
	}
}

func TestMethods(t *testing.T) {
	h := Handler()
	if rec := get(t, h, http.MethodHead, "/", nil); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD /: status %d, %d body bytes; want 200 and none", rec.Code, rec.Body.Len())
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		if rec := get(t, h, m, "/", nil); rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /: status %d, want 405", m, rec.Code)
		}
	}
}

// TestScriptsBuildNoMarkup fails when a script could turn text into markup.
// Agent text must reach the page through textContent and Text nodes only.
func TestScriptsBuildNoMarkup(t *testing.T) {
	forbidden := []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "createContextualFragment", "DOMParser", "srcdoc", "javascript:"}
	n := 0
	err := fs.WalkDir(staticFiles, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".js") {
			return err
		}
		n++
		b, err := fs.ReadFile(staticFiles, name)
		if err != nil {
			return err
		}
		for _, f := range forbidden {
			if strings.Contains(string(b), f) {
				t.Errorf("%s uses %s", name, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no script embedded")
	}
}

// TestPagesHaveNothingInline keeps the pages within the Content-Security-Policy:
// no inline script, no inline event handler, no inline style.
func TestPagesHaveNothingInline(t *testing.T) {
	inlineScript := regexp.MustCompile(`(?is)<script\b[^>]*>\s*[^<\s]`)
	handlerAttr := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	styleAttr := regexp.MustCompile(`(?i)\sstyle\s*=|<style\b`)
	err := fs.WalkDir(staticFiles, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".html") {
			return err
		}
		b, err := fs.ReadFile(staticFiles, name)
		if err != nil {
			return err
		}
		page := string(b)
		if inlineScript.MatchString(page) {
			t.Errorf("%s has an inline script", name)
		}
		for _, tag := range regexp.MustCompile(`(?i)<script\b[^>]*>`).FindAllString(page, -1) {
			if !strings.Contains(tag, ` src="/static/`) {
				t.Errorf("%s: script tag %s does not load a file from /static/", name, tag)
			}
		}
		if handlerAttr.MatchString(page) {
			t.Errorf("%s has an inline event handler", name)
		}
		if styleAttr.MatchString(page) {
			t.Errorf("%s has inline style", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDOMHooks pins the ids that the browser tests rely on.
func TestDOMHooks(t *testing.T) {
	h := Handler()
	for path, ids := range map[string][]string{
		"/":           {"sessions", "filter-status", "filter-harness", "search", "load-more"},
		"/sessions/x": {"timeline", "recap", "context", "show-raw", "title", "status"},
	} {
		body := get(t, h, http.MethodGet, path, nil).Body.String()
		for _, id := range ids {
			if !strings.Contains(body, `id="`+id+`"`) {
				t.Errorf("GET %s: no element with id %q", path, id)
			}
		}
	}
}
