// Command crashwriter appends events to one session of a store for the
// crash test, printing on stdout the seq of the last acknowledged event
// each time it changes. The test kills it with SIGKILL at random moments
// and checks that every printed seq was kept.
//
// Usage: crashwriter DB SESSION SEED
package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: crashwriter DB SESSION SEED")
		os.Exit(2)
	}
	seed, _ := strconv.ParseUint(os.Args[3], 10, 64)
	r := rand.New(rand.NewPCG(seed, 1))
	ctx := context.Background()
	st, err := sqlite.OpenOptions(os.Args[1], sqlite.Options{BatchSize: 1 + r.IntN(200), FlushInterval: time.Duration(1+r.IntN(5)) * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w, err := st.CreateWriter(ctx, store.NewSession{ID: os.Args[2], Protocol: "jsonl", Harness: "jsonl"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	var printed int64
	report := func() {
		if a := w.Acked(); a > printed {
			printed = a
			fmt.Fprintln(out, a)
			out.Flush()
		}
	}
	for seq := int64(1); ; seq++ {
		text := strings.Repeat("x", r.IntN(2000))
		e := agentstream.Envelope{
			Session: w.Session(), Seq: seq, TS: time.Now(), Harness: "jsonl", Turn: 1,
			Payload: &agentstream.Message{Role: agentstream.RoleAssistant, Text: fmt.Sprintf("event %d %s", seq, text)},
			Source:  &agentstream.Source{Stream: "stdout", Line: seq},
		}
		if err := w.Line(ctx, store.Line{Stream: store.Stdout, N: seq, Data: []byte(`{"type":"message","n":` + strconv.FormatInt(seq, 10) + `}`)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := w.Handle(ctx, e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		switch r.IntN(50) {
		case 0:
			if err := w.Flush(ctx); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		case 1:
			time.Sleep(time.Millisecond)
		}
		report()
	}
}
