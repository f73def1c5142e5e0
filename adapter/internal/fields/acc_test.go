package fields

import (
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
)

func TestAccWhole(t *testing.T) {
	whole := strings.Repeat("héllo wörld 日本 ", 40)
	for _, size := range []int{1, 3, 7, 64, 200, len(whole)} {
		var a Acc
		for i := 0; i < len(whole); i += size {
			a.Add(whole[i:min(i+size, len(whole))], time.Time{})
		}
		if !a.Whole(whole) || a.Hash() != Hash(whole) {
			t.Errorf("pieces of %d bytes: the whole text is not recognised", size)
		}
		other := whole[:len(whole)-1] + "!"
		if a.Whole(other) || a.Whole(whole[1:]) {
			t.Errorf("pieces of %d bytes: another text taken for the whole", size)
		}
		if text, trunc := a.Text(); text != whole || trunc {
			t.Errorf("pieces of %d bytes: Text() = %q, %v", size, text, trunc)
		}
	}
	var a Acc
	if a.Whole("") || a.Hash() != Hash("") {
		t.Error("an empty Acc")
	}
}

func TestAccClips(t *testing.T) {
	piece := strings.Repeat("é", 1000) // 2,000 bytes
	var a Acc
	for range 20 {
		a.Add(piece, time.Time{})
	}
	text, trunc := a.Text()
	if !trunc || agentstream.CountChars(text) != agentstream.MaxText || !strings.HasPrefix(strings.Repeat(piece, 20), text) {
		t.Fatalf("Text() of 20,000 code points = %d code points, truncated %v", agentstream.CountChars(text), trunc)
	}
	if !a.Whole(strings.Repeat(piece, 20)) {
		t.Fatal("the whole text past the kept bytes is not recognised")
	}
	a.Reset()
	a.Add("short", time.Unix(5, 0))
	if text, trunc := a.Text(); text != "short" || trunc || !a.Stamped {
		t.Fatalf("after Reset: %q, %v, stamped %v", text, trunc, a.Stamped)
	}
}

func TestDeltas(t *testing.T) {
	var d Deltas
	var msgs []*agentstream.MessageDelta
	for i := range 3 * deltaSlab {
		msgs = append(msgs, d.Message(agentstream.RoleAssistant, strings.Repeat("x", i)))
		if th := d.Thinking("t"); th.Text != "t" {
			t.Fatalf("thinking %q", th.Text)
		}
	}
	for i, m := range msgs {
		if len(m.Text) != i || m.Role != agentstream.RoleAssistant {
			t.Fatalf("payload %d changed: %q %q", i, m.Role, m.Text)
		}
	}
}
