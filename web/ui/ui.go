package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

//go:embed static
var staticFiles embed.FS

// ContentSecurityPolicy is the policy sent with every response of [Handler].
// It allows scripts, styles and connections to this origin only, so agent
// text that reached the page as markup could not run.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"frame-ancestors 'none'"

// contentTypes is fixed here rather than taken from package mime, whose table
// the host's /etc/mime.types can change: a module script served with a
// different type does not run.
var contentTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".json":  "application/json",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".txt":   "text/plain; charset=utf-8",
	".woff2": "font/woff2",
}

// asset is one embedded file, ready to serve.
type asset struct {
	name        string
	body        []byte
	contentType string
	etag        string
}

// Handler returns the handler of the web timeline, meant to be mounted at "/"
// on the mux that serves the API under /api/. It serves
//
//   - / : the sessions list page;
//   - /sessions/{id} : the page of one session (an event is addressed as
//     /sessions/{id}#seq);
//   - /usage : the usage page, charts and a table of GET /api/usage;
//   - /static/... : the embedded scripts, styles and images.
//
// Only GET and HEAD are allowed. Every other path answers 404: a page that
// says so with a link back to the sessions list, or a JSON error under
// /api/, in case the API is not mounted. Responses carry
// Cache-Control: no-cache with an ETag, so a new binary's assets are picked up
// at once while unchanged ones revalidate cheaply, and the security headers
// (Content-Security-Policy, X-Content-Type-Options, Referrer-Policy). The
// returned handler is safe for concurrent use.
func Handler() http.Handler {
	assets := loadAssets()
	index := assets["index.html"]
	session := assets["session.html"]
	usage := assets["usage.html"]
	notFound := func(w http.ResponseWriter, r *http.Request) { serveNotFound(w, r, assets["notfound.html"]) }

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, r, index)
	})
	mux.HandleFunc("GET /usage", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, r, usage)
	})
	mux.HandleFunc("GET /sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "" {
			notFound(w, r)
			return
		}
		serveAsset(w, r, session)
	})
	mux.HandleFunc("GET /static/{file...}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("file")]
		if !ok {
			notFound(w, r)
			return
		}
		serveAsset(w, r, a)
	})
	mux.HandleFunc("/", notFound)

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// loadAssets reads every embedded file under static/, keyed by its path
// relative to static/. It panics if the embedded tree is broken, which only a
// build of this package with missing files could cause.
func loadAssets() map[string]*asset {
	root, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic("ui: " + err.Error())
	}
	assets := make(map[string]*asset)
	err = fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[strings.ToLower(path.Ext(name))]
		if !ok {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		assets[name] = &asset{
			name:        name,
			body:        body,
			contentType: ct,
			etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
		}
		return nil
	})
	if err != nil {
		panic("ui: " + err.Error())
	}
	for _, page := range []string{"index.html", "session.html", "notfound.html"} {
		if assets[page] == nil {
			panic("ui: static/" + page + " is not embedded")
		}
	}
	return assets
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

func serveAsset(w http.ResponseWriter, r *http.Request, a *asset) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	// ServeContent answers If-None-Match with 304 and handles HEAD and
	// ranges; the zero modification time leaves Last-Modified out.
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
}

// serveNotFound answers 404 with page, or with a JSON error under /api/.
func serveNotFound(w http.ResponseWriter, r *http.Request, page *asset) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache")
	if r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/") {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"not found"}` + "\n"))
		return
	}
	h.Set("Content-Type", page.contentType)
	h.Set("Content-Length", strconv.Itoa(len(page.body)))
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = w.Write(page.body)
	}
}
