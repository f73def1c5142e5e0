package browser_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentstream/agentstream"
)

// TestSearchPage imports a recorded Claude session, types on the sessions
// list a word that occurs only in one of its tool outputs, sees the
// highlighted snippet, and follows it to that event on the session page.
func TestSearchPage(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "adapter", "claude", "testdata", "lab-claude-2.1.328-edits.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	id, envs, err := importRecordingAs(ctx, srv.st, data, "claude-json", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// A word of letters held, whole, by one tool output and by nothing
	// else of the session.
	var others strings.Builder
	for _, e := range envs {
		if _, ok := e.Payload.(*agentstream.ToolResult); !ok {
			others.WriteString(strings.ToLower(string(e.AppendJSON(nil))))
		}
	}
	var word string
	var seq int64
	for _, e := range envs {
		r, ok := e.Payload.(*agentstream.ToolResult)
		if !ok || word != "" {
			continue
		}
		out := strings.ToLower(r.Output)
		for _, w := range regexp.MustCompile(`[a-z]{7,}`).FindAllString(out, -1) {
			whole := regexp.MustCompile(`(^|[^\pL\pN])` + w + `($|[^\pL\pN])`)
			n := 0
			for _, o := range envs {
				if r2, ok := o.Payload.(*agentstream.ToolResult); ok && strings.Contains(strings.ToLower(r2.Output), w) {
					n++
				}
			}
			if n == 1 && !strings.Contains(others.String(), w) && strings.Count(out, w) == len(whole.FindAllString(out, -1)) {
				word, seq = w, e.Seq
				break
			}
		}
	}
	if word == "" {
		t.Fatal("no word occurs in one tool output only")
	}
	t.Logf("searching %q, in the output at seq %d", word, seq)
	w, err := session(ctx, srv.st, "s_other", time.Now(), &agentstream.Message{Role: "user", Text: "nothing to see"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}

	b := startBrowser(t, chrome)
	tb := b.tab(t)
	tb.open(srv.url+"/", visible(byID("search-all"))+" && document.querySelectorAll('#sessions-body tr').length === 2")
	tb.do("type the query", chromedp.SendKeys(chromedp.ID("search-all"), strings.ToUpper(word[:1])+word[1:]))
	tb.waitFor("the highlighted snippet", "document.querySelectorAll('#search-results .search-hit mark').length > 0", 10*time.Second)
	got := eval[struct {
		Hits  int
		Href  string
		Marks []string
		Text  string
		Meta  string
	}](tb, `(() => { const a = document.querySelectorAll('#search-results .search-hit');
		return { Hits: a.length, Href: a[0].getAttribute('href'), Marks: [...a[0].querySelectorAll('mark')].map((m) => m.textContent),
			Text: a[0].querySelector('.search-hit-snippet').textContent, Meta: a[0].querySelector('.search-hit-meta').textContent }; })()`)
	want := "/sessions/" + id + "#" + strconv.FormatInt(seq, 10)
	if got.Hits != 1 || got.Href != want {
		t.Errorf("%d hits, the first to %q; want 1 to %q", got.Hits, got.Href, want)
	}
	if len(got.Marks) == 0 || strings.ToLower(got.Marks[0]) != word || !strings.Contains(strings.ToLower(got.Text), word) {
		t.Errorf("snippet %q with marks %q: want %q marked", got.Text, got.Marks, word)
	}
	if !strings.Contains(got.Meta, "tool output") || !strings.Contains(got.Meta, "#"+strconv.FormatInt(seq, 10)) {
		t.Errorf("hit meta %q: want the tool output and its seq", got.Meta)
	}
	tb.screenshot("search-results.png")

	// A query that cannot be read says why, on the page.
	tb.do("type a bad query", chromedp.SendKeys(chromedp.ID("search-all"), ` "unclosed`))
	tb.waitFor("the bad query's message", byID("search-note")+".textContent.includes('unclosed quote')", 10*time.Second)
	tb.do("clear the query", chromedp.SetValue(chromedp.ID("search-all"), word), chromedp.SendKeys(chromedp.ID("search-all"), " "))
	tb.waitFor("the hit again", "document.querySelectorAll('#search-results .search-hit').length === 1", 10*time.Second)

	// The date filters reach the API: nothing until a day before the
	// session, the hit again up to the end of its day.
	setUntil := func(v string) {
		eval[bool](tb, `(() => { const el = document.getElementById('search-until'); el.value = `+js(v)+`;
			el.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
	}
	day := func(d time.Time) string { return d.Local().Format("2006-01-02") }
	var ts time.Time // the event's time, else the session's start
	for _, e := range envs {
		if !e.TS.IsZero() && (ts.IsZero() || e.Seq <= seq) {
			ts = e.TS
		}
	}
	if ts.IsZero() {
		t.Fatal("the recording has no times")
	}
	setUntil(day(ts.AddDate(0, 0, -1)))
	tb.waitFor("no match before the session", byID("search-note")+".textContent === 'No matches.'", 10*time.Second)
	setUntil(day(ts))
	tb.waitFor("the hit up to the end of its day", "document.querySelectorAll('#search-results .search-hit').length === 1", 10*time.Second)

	listURL := eval[string](tb, "location.href")
	if u, err := url.Parse(listURL); err != nil || strings.TrimSpace(u.Query().Get("search")) != word {
		t.Errorf("the list page's URL is %q, want its search parameter to be %q", listURL, word)
	}

	// Following the hit opens the session at the event, shown and marked.
	tb.do("follow the hit", chromedp.Click(chromedp.CSS("#search-results .search-hit")))
	el := byID("e" + strconv.FormatInt(seq, 10))
	tb.do("load the session page", chromedp.WaitVisible(chromedp.ID("e"+strconv.FormatInt(seq, 10))))
	tb.waitFor("the event on the session page", "location.pathname === "+js("/sessions/"+id)+" && !!"+el+" && "+el+".classList.contains('highlight') && "+visible(el), 20*time.Second)
	if text := eval[string](tb, el+".textContent.toLowerCase()"); !strings.Contains(text, word) {
		t.Errorf("event %d on the session page holds %q, not %q", seq, text, word)
	}
	tb.screenshot("search-followed.png")

	// The list page's URL keeps the query (beside the list's own
	// filters): opened again, as after a reload, from a shared link or on
	// the way back from a hit, it shows the same query and hit.
	tb.open(listURL, byID("search-all")+".value.trim() === "+js(word)+
		" && document.querySelectorAll('#search-results .search-hit').length === 1")
	if href := eval[string](tb, "document.querySelector('#search-results .search-hit').getAttribute('href')"); href != want {
		t.Errorf("the list page opened again links its hit to %q, want %q", href, want)
	}
}
