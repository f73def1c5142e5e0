package browser_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// goDiff is the diff of a Go file, with a keyword, a string and a comment
// on each side, and a block comment that runs over two added lines.
var goDiff = strings.Join([]string{
	"--- a/hello/main.go",
	"+++ b/hello/main.go",
	"@@ -1,6 +1,8 @@",
	" package main",
	" ",
	"-// greet says hello.",
	"+// greet says hello to name.",
	"+/* It is kept short:",
	"+   one line. */",
	" func greet(name string) string {",
	`-	return "hello"`,
	`+	return "hello, " + name`,
	" }",
}, "\n") + "\n"

// pyBlock is a message's fenced code block that names its language.
const pyBlock = "Run this:\n\n```python\ndef f():\n    return 'x'  # done\n```\n"

// TestSyntaxColour opens a session with the diff of a Go file and a
// message with a Python code block, and reads the tokens the page coloured.
func TestSyntaxColour(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t)
	ctx := context.Background()
	id := "s_syntax_colour"
	w, err := session(ctx, srv.st, id, time.Now().Add(-time.Minute),
		&agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-4-5", Cwd: "/work/hello"},
		&agentstream.Message{Role: "user", Text: "make greet take a name"},
		&agentstream.FileChange{CallID: "e1", Changes: []agentstream.FileChangeItem{{Path: "hello/main.go", Kind: "modify", Diff: goDiff}}},
		&agentstream.Message{Role: "assistant", Text: pyBlock},
		&agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, chrome)
	tb := b.tab(t)
	tb.open(srv.url+"/sessions/"+id, sel("#e3 .diff")+" && "+sel("#e4 pre.md-code"))

	// tokens is the text of the tokens of a kind within the elements sel
	// matches.
	tokens := func(sel, kind string) []string {
		return eval[[]string](tb, texts(sel+" .tk-"+kind))
	}
	want := func(where string, got []string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !slices.Contains(got, w) {
				t.Errorf("%s: no token %q in %q", where, w, got)
			}
		}
	}
	// The words of the input that are neither keywords nor literals stay
	// plain.
	plain := func(where string, sel string) {
		t.Helper()
		for _, kind := range []string{"kw", "lit", "str", "num"} {
			for _, tok := range tokens(sel, kind) {
				if tok == "greet" || tok == "name" || tok == "main" {
					t.Errorf("%s: %q coloured as %s", where, tok, kind)
				}
			}
		}
	}
	lines := strings.Split(strings.TrimSuffix(goDiff, "\n"), "\n")
	linesOf := func(prefix string) []string {
		var out []string
		for _, l := range lines[3:] {
			if strings.HasPrefix(l, prefix) {
				out = append(out, l)
			}
		}
		return out
	}

	t.Run("unified", func(t *testing.T) {
		if got := eval[string](tb, sel("#e3 .change")+".dataset.lang"); got != "go" {
			t.Errorf("the change of hello/main.go has language %q, want go", got)
		}
		// The text is the diff's, whatever the colours.
		for _, c := range []struct{ cls, prefix string }{{"d-add", "+"}, {"d-del", "-"}, {"d-ctx", " "}} {
			if got, want := eval[[]string](tb, texts("#e3 pre.diff-unified ."+c.cls)), linesOf(c.prefix); !equalLines(got, want) {
				t.Errorf("%s lines %q, want %q", c.cls, got, want)
			}
		}
		want("added lines, keywords", tokens("#e3 .d-add", "kw"), "return")
		want("added lines, strings", tokens("#e3 .d-add", "str"), `"hello, "`)
		want("added lines, comments", tokens("#e3 .d-add", "com"), "// greet says hello to name.", "/* It is kept short:", "   one line. */") // not a path: a C comment
		want("removed lines, strings", tokens("#e3 .d-del", "str"), `"hello"`)
		want("removed lines, comments", tokens("#e3 .d-del", "com"), "// greet says hello.")
		want("context lines, keywords", tokens("#e3 .d-ctx", "kw"), "package", "func")
		want("context lines, types", tokens("#e3 .d-ctx", "lit"), "string")
		plain("unified", "#e3")
		// The colours show: a keyword is not the colour of its line, and the
		// line keeps its added background.
		type colours struct{ Kw, Str, Com, Line, LineBg, CtxBg string }
		c := eval[colours](tb, `(() => {
			const add = [...document.querySelectorAll('#e3 pre.diff-unified .d-add')].find((l) => l.textContent.includes('return'));
			const cs = (el) => getComputedStyle(el);
			return {Kw: cs(add.querySelector('.tk-kw')).color, Str: cs(add.querySelector('.tk-str')).color,
				Com: cs(document.querySelector('#e3 .d-add .tk-com')).color, Line: cs(add).color,
				LineBg: cs(add).backgroundColor, CtxBg: cs(document.querySelector('#e3 .d-ctx')).backgroundColor};
		})()`)
		t.Logf("light: keyword %s, string %s, comment %s on an added line of %s over %s", c.Kw, c.Str, c.Com, c.Line, c.LineBg)
		if c.Kw == c.Line || c.Str == c.Line || c.Com == c.Line || c.Kw == c.Str {
			t.Errorf("tokens not coloured apart: keyword %s, string %s, comment %s, line %s", c.Kw, c.Str, c.Com, c.Line)
		}
		if c.LineBg == c.CtxBg {
			t.Errorf("an added line has the background of a context line (%s)", c.LineBg)
		}
	})

	t.Run("side by side", func(t *testing.T) {
		tb.do("split the diff", chromedp.Click(chromedp.CSS("#e3 .split-btn")))
		tb.waitFor("the side-by-side diff", sel("#e3 table.diff-split"), 5*time.Second)
		want("right side, keywords", tokens("#e3 td.d-add", "kw"), "return")
		want("right side, strings", tokens("#e3 td.d-add", "str"), `"hello, "`)
		want("right side, comments", tokens("#e3 td.d-add", "com"), "/* It is kept short:", "   one line. */") // not a path: a C comment
		want("left side, comments", tokens("#e3 td.d-del", "com"), "// greet says hello.")
		// a context line shows on both sides, coloured on both
		if got := tokens("#e3 td.d-ctx", "kw"); len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { return s != "func" })) != 2 {
			t.Errorf("context keywords %q, want func on both sides", got)
		}
		plain("side by side", "#e3")
		tb.screenshot("syntax-split-light.png")
		tb.do("back to unified", chromedp.Click(chromedp.CSS("#e3 .split-btn")))
		tb.waitFor("the unified diff", sel("#e3 pre.diff-unified"), 5*time.Second)
	})

	t.Run("code block", func(t *testing.T) {
		block := "#e4 pre.md-code code[data-lang='py']"
		if got := eval[string](tb, sel(block)+"?.textContent ?? ''"); got != "def f():\n    return 'x'  # done" {
			t.Errorf("code block shows %q", got)
		}
		want("code block, keywords", tokens(block, "kw"), "def", "return")
		want("code block, strings", tokens(block, "str"), "'x'")
		want("code block, comments", tokens(block, "com"), "# done")
	})

	t.Run("dark", func(t *testing.T) {
		light := eval[string](tb, "getComputedStyle("+sel("#e3 .d-add .tk-kw")+").color")
		if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		}); err != nil {
			t.Fatal(err)
		}
		dark := eval[string](tb, "getComputedStyle("+sel("#e3 .d-add .tk-kw")+").color")
		t.Logf("a keyword: %s in light mode, %s in dark", light, dark)
		if dark == light {
			t.Errorf("a keyword is %s in both modes", dark)
		}
		tb.do("scroll to the diff", chromedp.Evaluate[chromedp.Void](sel("#e3")+".scrollIntoView({block: 'start'})"))
		tb.screenshot("syntax-unified-dark.png")
		tb.do("split the diff", chromedp.Click(chromedp.CSS("#e3 .split-btn")))
		tb.waitFor("the side-by-side diff", sel("#e3 table.diff-split"), 5*time.Second)
		tb.screenshot("syntax-split-dark.png")
		tb.do("back to unified", chromedp.Click(chromedp.CSS("#e3 .split-btn")))
		if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}},
		}); err != nil {
			t.Fatal(err)
		}
		tb.screenshot("syntax-unified-light.png")
	})
}
