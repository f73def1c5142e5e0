package runner

import (
	"io"
	"sync"
)

// stdinWriter writes to the harness's stdin from a goroutine of its own, so
// that a harness that does not read its stdin never blocks the session.
// Writes are queued without bound; they are few and small (a prompt, a
// handful of protocol messages).
//
// The goroutine returns after closing the pipe, which happens once close
// was called and the queue is written, or as soon as a write fails;
// abort makes a blocked write fail.
type stdinWriter struct {
	w    io.WriteCloser
	wake chan struct{}
	done chan struct{}

	mu      sync.Mutex
	queue   [][]byte
	closing bool
}

func newStdinWriter(w io.WriteCloser) *stdinWriter {
	sw := &stdinWriter{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go sw.loop()
	return sw
}

// send queues b; it does not block. b must not be modified afterwards.
func (sw *stdinWriter) send(b []byte) {
	sw.mu.Lock()
	if !sw.closing {
		sw.queue = append(sw.queue, b)
	}
	sw.mu.Unlock()
	sw.poke()
}

// close closes stdin once what was queued is written.
func (sw *stdinWriter) close() {
	sw.mu.Lock()
	sw.closing = true
	sw.mu.Unlock()
	sw.poke()
}

// abort closes stdin now, dropping what was not written, and waits for the
// goroutine to return.
func (sw *stdinWriter) abort() {
	sw.close()
	sw.w.Close()
	<-sw.done
}

func (sw *stdinWriter) poke() {
	select {
	case sw.wake <- struct{}{}:
	default:
	}
}

func (sw *stdinWriter) loop() {
	defer close(sw.done)
	defer sw.w.Close()
	for range sw.wake {
		for {
			sw.mu.Lock()
			q, closing := sw.queue, sw.closing
			sw.queue = nil
			sw.mu.Unlock()
			if len(q) == 0 {
				if closing {
					return
				}
				break
			}
			for _, b := range q {
				if _, err := sw.w.Write(b); err != nil {
					return
				}
			}
		}
	}
}
