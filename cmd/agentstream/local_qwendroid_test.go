package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstream/agentstream/store/sqlite"
)

// qwenChats and droidSessions are the lab's files of Qwen Code 0.24.4 and
// Droid 0.225.2 (each adapter's testdata SOURCES.md), by their place under
// ~/.qwen/projects and ~/.factory/sessions.
var (
	qwenChats = map[string]string{
		"-lab-work/chats/f84e0852-3f43-406b-a96a-e183aa40d74e.jsonl": "qwen-0.24.4-shell-chat.jsonl",
		"-lab-work/chats/1c6f4187-cc62-4eca-b25b-321362cb59a4.jsonl": "qwen-0.24.4-toolfail-chat.jsonl",
	}
	droidSessions = map[string]string{
		"-lab-work/9825606d-c824-4a96-b60d-b50bd8556ae3": "droid-0.225.2-shell-session.jsonl",
		"-lab-work/cb78d0c4-df8a-494f-8556-a2aaaea0837c": "droid-0.225.2-toolfail-session.jsonl",
	}
)

// TestImportLocalQwen: import --local imports Qwen Code's chats, each a
// qwen-code session of the qwen-chat protocol titled with its first
// prompt, with every line and each response's tokens (the prompt count
// less the cached input as input); a second import skips them.
func TestImportLocalQwen(t *testing.T) {
	home := t.TempDir()
	localHome(t, home)
	var want tokenTotals
	titles := map[string]string{}
	for rel, fixture := range qwenChats {
		data := readString(t, "../../adapter/gemini/testdata/qwenchat/"+fixture)
		p := filepath.Join(home, ".qwen", "projects", filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
			var r struct {
				Type    string `json:"type"`
				Message struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
				Usage struct {
					Prompt     int64 `json:"promptTokenCount"`
					Candidates int64 `json:"candidatesTokenCount"`
					Thoughts   int64 `json:"thoughtsTokenCount"`
					Cached     int64 `json:"cachedContentTokenCount"`
				} `json:"usageMetadata"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Type == "user" && titles[p] == "" && len(r.Message.Parts) > 0 {
				titles[p] = strings.TrimSpace(r.Message.Parts[0].Text)
			}
			if r.Type == "assistant" {
				want.Input += r.Usage.Prompt - r.Usage.Cached
				want.Output += r.Usage.Candidates + r.Usage.Thoughts
				want.CacheRead += r.Usage.Cached
			}
		}
	}
	if want.Input == 0 || want.Output == 0 || want.CacheRead == 0 {
		t.Fatalf("the chats hold no tokens: %+v", want)
	}
	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--harness", "qwen-code", "--db", db)
	if code != exitOK || strings.Count(out, "\tqwen-code\timported\t") != len(qwenChats) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d imported", code, out, stderr, len(qwenChats))
	}
	if got := usageTotals(t, db); got != want {
		t.Errorf("usage totals %+v, want %+v from the usageMetadata", got, want)
	}
	checkLocalSessions(t, db, "qwen-code", "qwen-chat", titles)
	out, stderr, code = runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK || out != "" || !strings.Contains(stderr, "0 imported or updated, 2 unchanged, 0 failed") {
		t.Errorf("second import: exit %d, stdout %q, stderr %q; want both unchanged", code, out, stderr)
	}
}

// TestImportLocalDroid: import --local imports Droid's sessions, each read
// with its settings file, a droid session of the droid-session protocol
// with its own title, a line per record and the settings' token totals; a
// second import skips them; a settings file that changed updates its
// session.
func TestImportLocalDroid(t *testing.T) {
	home := t.TempDir()
	localHome(t, home)
	var want tokenTotals
	titles := map[string]string{}
	var settings string
	for rel, fixture := range droidSessions {
		data := strings.TrimSpace(readString(t, "../../adapter/droid/testdata/session/"+fixture))
		// The fixture is the session's lines, then its settings on one
		// line: the HOME gets them as Droid writes them, two files.
		cut := strings.LastIndex(data, "\n")
		lines, set := data[:cut+1], data[cut+1:]
		p := filepath.Join(home, ".factory", "sessions", filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		var indented map[string]any
		if err := json.Unmarshal([]byte(set), &indented); err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(indented, "", "  ")
		if err := os.WriteFile(p+".jsonl", []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".settings.json", b, 0o600); err != nil {
			t.Fatal(err)
		}
		settings = p + ".settings.json"
		var start struct {
			Title string `json:"title"`
		}
		json.Unmarshal([]byte(lines[:strings.Index(lines, "\n")]), &start)
		titles[p+".jsonl"] = start.Title
		var s struct {
			Usage struct {
				Input      int64 `json:"inputTokens"`
				Output     int64 `json:"outputTokens"`
				CacheRead  int64 `json:"cacheReadTokens"`
				CacheWrite int64 `json:"cacheCreationTokens"`
			} `json:"tokenUsage"`
		}
		json.Unmarshal([]byte(set), &s)
		want.Input += s.Usage.Input
		want.Output += s.Usage.Output
		want.CacheRead += s.Usage.CacheRead
		want.CacheWrite += s.Usage.CacheWrite
	}
	if want.Input == 0 || want.Output == 0 {
		t.Fatalf("the settings hold no tokens: %+v", want)
	}
	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK || strings.Count(out, "\tdroid\timported\t") != len(droidSessions) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d imported", code, out, stderr, len(droidSessions))
	}
	if got := usageTotals(t, db); got != want {
		t.Errorf("usage totals %+v, want %+v from the settings files", got, want)
	}
	checkLocalSessions(t, db, "droid", "droid-session", titles)
	out, stderr, code = runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK || out != "" || !strings.Contains(stderr, "0 imported or updated, 2 unchanged, 0 failed") {
		t.Errorf("second import: exit %d, stdout %q, stderr %q; want both unchanged", code, out, stderr)
	}
	// Droid rewrites a session's settings as it goes on: the session is
	// read again.
	data := readString(t, settings)
	os.WriteFile(settings, []byte(strings.Replace(data, `"factoryCredits": 0`, `"factoryCredits": 1`, 1)), 0o600)
	out, stderr, code = runCLI(t, "", "import", "--local", "--harness", "droid", "--db", db)
	if code != exitOK || strings.Count(out, "\tdroid\tupdated\t") != 1 {
		t.Errorf("after new settings: exit %d, stdout %q, stderr %q; want one session updated", code, out, stderr)
	}
}

// checkLocalSessions holds the sessions imported from files (by path) to
// their harness, protocol and title, and their stored lines to the lines
// the file had (with its settings line, for droid).
func checkLocalSessions(t *testing.T, db, harness, protocol string, titles map[string]string) {
	t.Helper()
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for p, title := range titles {
		id := localID(harness, p)
		sess, err := st.Session(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(p), err)
		}
		if title == "" || sess.Harness != harness || sess.Protocol != protocol || sess.Title != title {
			t.Errorf("%s: session %s/%s titled %q; want %s/%s titled %q", filepath.Base(p), sess.Harness, sess.Protocol, sess.Title, harness, protocol, title)
		}
		lines[id] = strings.Count(readString(t, p), "\n")
		if harness == "droid" {
			lines[id]++ // the settings
		}
	}
	st.Close()
	for id, n := range lines {
		if got := storedLines(t, db, id); got != n {
			t.Errorf("%s: %d lines stored, want %d", id, got, n)
		}
	}
}
