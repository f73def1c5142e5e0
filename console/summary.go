package console

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
)

// summary is the Markdown recap of the session for a CI step summary. Every
// value that came from the harness is sanitized and escaped, so it renders
// as the text it is.
func (r *Renderer) summary() string {
	var b strings.Builder
	status, reason := "unknown", ""
	var ended agentstream.SessionEnded
	if r.ended != nil {
		ended = *r.ended
		status, reason = orUnknown(ended.Status), ended.Reason
	}
	title := "agentstream"
	if r.harness != "" {
		title += ": " + md(r.harness)
	}
	b.WriteString("### " + title + " — " + md(status) + "\n\n")
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) {
		if v != "" {
			b.WriteString("| " + k + " | " + v + " |\n")
		}
	}
	row("Status", md(status))
	row("Reason", md(reason))
	if ended.StopReason != "" {
		row("Stop reason", md(ended.StopReason))
	}
	if ended.Error != "" {
		row("Error", md(clipText(ended.Error, 500)))
	}
	row("Title", md(r.title))
	row("Model", md(r.model))
	rc := r.folder.Recap()
	if d, ok := r.duration(&rc); ok {
		row("Duration", agentstream.FormatDurationMs(d))
	}
	turns := r.maxTurn
	if rc.Turns != nil {
		turns = *rc.Turns
	}
	if turns > 0 {
		row("Turns", strconv.FormatInt(turns, 10))
	}
	if n := rc.ModelCalls; n != nil && *n > 0 {
		row("Model calls", strconv.FormatInt(*n, 10))
	}
	if rc.TokensFrom == "" {
		row("Tokens", "not reported")
	} else {
		row("Tokens", strings.Join(tokenFigures(&rc), " · "))
	}
	if c := costFigure(&rc); c != "" {
		row("Cost", c)
	} else {
		row("Cost", "not reported")
	}
	row("Context", contextFigure(&rc))
	if len(r.toolOrder) > 0 {
		b.WriteString("\n| Tool | Calls | Failed |\n|---|---:|---:|\n")
		for _, name := range r.toolOrder {
			c := r.tools[name]
			b.WriteString("| " + md(name) + " | " + strconv.Itoa(c.calls) + " | " + strconv.Itoa(c.failed) + " |\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// md makes s inert in a Markdown table cell: it is sanitized, put on one
// line, and every ASCII punctuation character is escaped, so no link,
// image, HTML, emphasis or cell break can come out of it.
func md(s string) string {
	s = Sanitize(s)
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\n' || c == '\t':
			b.WriteByte(' ')
		case c < 0x80 && isPunct(byte(c)):
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	return strings.TrimSpace(b.String())
}

func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
