package natsbus_test

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
)

// recorder is a store.Publisher keeping what it is handed, an end as an
// event of type "end".
type recorder struct {
	mu  sync.Mutex
	evs []store.Event
}

func (r *recorder) Publish(ev store.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recorder) End(session string) { r.Publish(store.Event{Session: session, Type: "end"}) }

func (r *recorder) events() []store.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]store.Event(nil), r.evs...)
}

func waitConnected(t *testing.T, f *natsbus.Feed) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f.Stats().Connected {
		if time.Now().After(deadline) {
			t.Fatal("the feed did not follow the stream of events")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEvents relays the events of two sessions from node a, stored ones
// and live deltas among them, ends, a record larger than a message can
// hold and one that needs a message of its own: node b's feed hands on
// every one but the oversized, in order, with its fields; node a's own
// feed none of them; the relay counts the one it dropped.
func TestEvents(t *testing.T) {
	s := startNATS(t, t.TempDir(), -1)
	ncA, ncB := connect(t, s.ClientURL()), connect(t, s.ClientURL())
	var onA, onB recorder
	feedA := natsbus.FollowEvents(ncA, &onA, natsbus.EventOptions{Node: "a"})
	defer feedA.Stop()
	feedB := natsbus.FollowEvents(ncB, &onB, natsbus.EventOptions{Node: "b"})
	defer feedB.Stop()
	waitConnected(t, feedA)
	waitConnected(t, feedB)
	relay := natsbus.NewRelay(ncA, natsbus.EventOptions{Node: "a"})
	defer relay.Stop()
	if relay.Node() != "a" {
		t.Fatalf("relay node %q, want a", relay.Node())
	}

	var want []store.Event
	send := func(ev store.Event) {
		if ev.Type == "end" {
			relay.End(ev.Session)
		} else {
			relay.Publish(ev)
		}
		want = append(want, ev)
	}
	big := bytes.Repeat([]byte("x"), 300<<10) // over the batch, under a message
	for i := int64(1); i <= 3000; i++ {
		for _, id := range []string{"s.one", "s:two"} {
			data := fmt.Appendf(nil, `{"seq":%d,"type":"message","text":"line %d of %s"}`, i, i, id)
			if i == 1500 {
				data = fmt.Appendf(nil, `{"seq":%d,"text":"%s"}`, i, big)
			}
			send(store.Event{Session: id, Seq: i, Type: "message", Data: data})
			if i%100 == 0 {
				send(store.Event{Session: id, Prev: i, Type: "message.delta", Data: []byte(`{"type":"message.delta","text":"ünï"}`)})
			}
		}
	}
	relay.Publish(store.Event{Session: "s.one", Seq: 3001, Type: "message", Data: fmt.Appendf(nil, `{"text":"%s"}`, bytes.Repeat([]byte("y"), 2<<20))})
	send(store.Event{Session: "s.one", Seq: 3001, Type: "message", Data: []byte(`{"after":"the oversized"}`)})
	send(store.Event{Session: "s.one", Type: "end"})
	send(store.Event{Session: "s:two", Type: "end"})

	deadline := time.Now().Add(20 * time.Second)
	for len(onB.events()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := onB.events()
	if len(got) != len(want) {
		t.Fatalf("node b had %d events and ends, want %d; relay %+v, feed %+v", len(got), len(want), relay.Stats(), feedB.Stats())
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Session != w.Session || g.Seq != w.Seq || g.Prev != w.Prev || g.Type != w.Type || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("event %d: got %+.80v, want %+.80v", i, g, w)
		}
	}
	if st := relay.Stats(); st.Dropped != 1 || st.Events != int64(len(want)) || !st.Connected {
		t.Errorf("relay stats %+v: want %d events, 1 dropped (the oversized), connected", st, len(want))
	}
	if st := feedB.Stats(); st.Events != int64(len(want)) || !st.Connected {
		t.Errorf("feed b stats %+v: want %d events, connected", st, len(want))
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(onA.events()); n != 0 {
		t.Errorf("node a's own feed handed on %d of its events, want none", n)
	}
}

// TestEventsResume stops the NATS server under a feed and starts it again
// on the same port: the feed and the relay make the stream again (in
// memory, it is gone), and the feed follows again and hands on what
// is relayed after, once.
func TestEventsResume(t *testing.T) {
	dir := t.TempDir()
	s := startNATS(t, dir, -1)
	port := s.Addr().(*net.TCPAddr).Port
	url := s.ClientURL()
	ncA, ncB := connect(t, url), connect(t, url)
	var onB recorder
	feed := natsbus.FollowEvents(ncB, &onB, natsbus.EventOptions{Node: "b"})
	defer feed.Stop()
	waitConnected(t, feed)
	relay := natsbus.NewRelay(ncA, natsbus.EventOptions{Node: "a"})
	defer relay.Stop()
	relay.Publish(store.Event{Session: "s", Seq: 1, Type: "message", Data: []byte(`{"n":1}`)})
	wait := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for len(onB.events()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("node b had %d events, want %d", len(onB.events()), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait(1)
	s.Shutdown()
	s.WaitForShutdown()
	startNATS(t, dir, port) // the stream of events, in memory, is gone
	deadline := time.Now().Add(30 * time.Second)
	for !ncA.IsConnected() || !ncB.IsConnected() || !feed.Stats().Connected {
		if time.Now().After(deadline) {
			t.Fatal("not connected again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The relay looks for the stream again within ten seconds; what it
	// relays before may be lost (the store has it), not duplicated.
	for i := int64(2); ; i++ {
		relay.Publish(store.Event{Session: "s", Seq: i, Type: "message", Data: fmt.Appendf(nil, `{"n":%d}`, i)})
		time.Sleep(100 * time.Millisecond)
		if evs := onB.events(); evs[len(evs)-1].Seq == i {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no event came through after the restart")
		}
	}
	evs := onB.events()
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Fatalf("events out of order or twice: seq %d after %d", evs[i].Seq, evs[i-1].Seq)
		}
	}
}

// FuzzDecodeEvents decodes any message as one of the stream of events:
// it never panics; each event it hands on has a valid session id, a seq
// not below zero, a type and an object for data, and its record, written
// again as a Relay writes it, decodes to the same event.
func FuzzDecodeEvents(f *testing.F) {
	var seed []byte
	seed = natsbus.AppendEventRecord(seed, store.Event{Session: "s.a", Seq: 3, Type: "message", Data: []byte(`{"text":"x"}`)}, false)
	seed = natsbus.AppendEventRecord(seed, store.Event{Session: "s.a", Prev: 3, Type: "message.delta", Data: []byte(`{"text":"é\n"}`)}, false)
	seed = natsbus.AppendEventRecord(seed, store.Event{Session: "s.a"}, true)
	f.Add(seed)
	f.Add([]byte(`{"session":"bad id","seq":1,"type":"t","data":{}}` + "\n"))
	f.Add([]byte(`{"session":"s","seq":-1,"type":"t","data":{}}` + "\n" + `not json` + "\n\n"))
	f.Add([]byte(`{"session":"s","seq":1,"type":"t","data":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got recorder
		n := natsbus.DecodeEvents(data, &got)
		evs := got.events()
		if n != len(evs) {
			t.Fatalf("handed on %d, said %d", len(evs), n)
		}
		for _, ev := range evs {
			if !store.ValidID(ev.Session) {
				t.Fatalf("session id %q", ev.Session)
			}
			end := ev.Type == "end" && ev.Data == nil
			if !end && (ev.Seq < 0 || ev.Type == "" || len(ev.Data) == 0 || ev.Data[0] != '{') {
				t.Fatalf("event %+v", ev)
			}
			var again recorder
			rec := natsbus.AppendEventRecord(nil, ev, end)
			if natsbus.DecodeEvents(rec, &again) != 1 {
				t.Fatalf("the record %q of %+v does not decode", rec, ev)
			}
			back := again.events()[0]
			if back.Session != ev.Session || back.Seq != ev.Seq || back.Prev != ev.Prev || back.Type != ev.Type {
				t.Fatalf("%+v came back as %+v", ev, back)
			}
		}
	})
}
