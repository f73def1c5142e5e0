package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeHostsAndHeartbeat runs serve and holds that it answers its own
// hosts and the --allow-host ones only, and that a remote session whose
// runner went silent for --heartbeat-timeout ends interrupted.
func TestServeHostsAndHeartbeat(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--db", filepath.Join(t.TempDir(), "s.db"), "--addr", addr,
			"--allow-host", "agents.example", "--heartbeat-timeout", "300ms"}, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exit %d: %s", code, stderr.String())
		}
	}()
	do := func(method, host, path, body string) (int, string) {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := do("GET", addr, "/api/sessions", ""); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, tt := range []struct {
		host, path string
		code       int
	}{
		{"agents.example", "/api/sessions", 200},
		{"agents.example:443", "/", 200},
		{"evil.example", "/api/sessions", 403},
		{"evil.example", "/", 403},
		{"localhost", "/", 200},
	} {
		if code, body := do("GET", tt.host, tt.path, ""); code != tt.code {
			t.Errorf("GET %s with Host %s: %d, want %d: %.200s", tt.path, tt.host, code, tt.code, body)
		}
	}
	code, body := do("POST", addr, "/api/sessions", `{"protocol":"claude-json","id":"remote"}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var s struct{ Status, Reason string }
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, body := do("GET", addr, "/api/sessions/remote", "")
		json.Unmarshal([]byte(body), &s)
		if s.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the silent session is still running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s.Status != "interrupted" || s.Reason != "heartbeat-timeout" {
		t.Errorf("silent session: %+v", s)
	}
}
