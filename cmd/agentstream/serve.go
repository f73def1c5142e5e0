package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/web/api"
	"github.com/agentstream/agentstream/web/ui"
)

const serveDoc = `Serves the stored sessions: the HTTP API under /api/ and the web timeline
at /. Sessions that other processes write to the same database (agentstream
run) are followed live. Bound to an address other than loopback, it refuses
to start without --token (or $AGENTSTREAM_TOKEN); with a token, every
request needs "Authorization: Bearer TOKEN" (or ?access_token=TOKEN, for
event streams opened by a browser).`

func cmdServe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve", "[--db PATH] [--addr 127.0.0.1:8377] [--token T]", serveDoc)
	db := dbFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8377", "the address to listen on")
	token := fs.String("token", "", "the bearer token every request must carry (default $AGENTSTREAM_TOKEN)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream serve: no arguments expected")
		return exitUsage
	}
	if *token == "" {
		*token = e.getenv("AGENTSTREAM_TOKEN")
	}
	if !isLoopback(*addr) && *token == "" {
		fmt.Fprintf(e.stderr, "agentstream serve: %s is not a loopback address: refusing to serve without --token\n", *addr)
		return exitUsage
	}
	st, err := openStore(e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitError
	}
	defer st.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitError
	}
	h := hub.New(hub.Options{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = st.Follow(ctx, h, 0)
	}()
	mux := http.NewServeMux()
	mux.Handle("/api/", api.New(st, h, api.Options{Token: *token}))
	mux.Handle("/", ui.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	fmt.Fprintf(e.stderr, "agentstream serve: http://%s (database %s)\n", ln.Addr(), st.Path())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		cancel() // ends the event streams, which Shutdown would wait for
		err = srv.Shutdown(sctx)
		scancel()
	}
	cancel()
	wg.Wait()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitError
	}
	return exitOK
}

// isLoopback reports whether addr (host:port) listens on loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
