package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/agentstream/agentstream/console"
)

// errEmptyInput is the error for an input with no lines at all.
var errEmptyInput = errors.New("no lines to read: the input is empty")

// textPeek is how much of an input checkText looks at.
const textPeek = 64 << 10

// checkText returns an error when br holds nothing but blank space, or
// holds a binary file rather than a harness's output: a NUL byte (JSON and
// text have none), or mostly bytes that are not UTF-8. It only peeks.
func checkText(br *bufio.Reader) error {
	head, _ := br.Peek(textPeek)
	if len(bytes.TrimSpace(head)) == 0 {
		return errEmptyInput
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return errors.New("a binary file (it holds NUL bytes), not a harness's output")
	}
	invalid := 0
	for b := head; len(b) > utf8.UTFMax; {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			invalid++
		}
		b = b[n:]
	}
	if invalid > len(head)/10 {
		return errors.New("a binary file (it is mostly not UTF-8), not a harness's output")
	}
	return nil
}

// readInput opens name ("-" is stdin) and calls fn with it, as withInput
// does, for command cmd. Stdin on a terminal is first announced on stderr,
// with how to end and stop the input, and read so that Ctrl-C (ctx done)
// stops a read that would block until the next line.
func readInput(ctx context.Context, e *env, cmd, name string, fn func(io.Reader) error) error {
	if name != "-" {
		return withInput(e, name, fn)
	}
	return fn(e.stdinFor(ctx, cmd))
}

// stdinFor returns the command's stdin; on a terminal it says what it
// reads first, and gives up a blocked read when ctx is done.
func (e *env) stdinFor(ctx context.Context, cmd string) io.Reader {
	f, ok := e.stdin.(*os.File)
	if !ok {
		return e.stdin
	}
	if _, tty := console.Terminal(f); !tty {
		return e.stdin
	}
	fmt.Fprintf(e.stderr, "agentstream %s: reading a harness's output from stdin, a terminal (give a FILE to read one): end it with Ctrl-D, stop with Ctrl-C\n", cmd)
	return &ctxReader{ctx: ctx, r: f}
}

// inputFailed reports an error of a command's reading or writing, and
// returns its exit code: exitAborted when ctx was cancelled (Ctrl-C).
func inputFailed(ctx context.Context, e *env, cmd string, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintf(e.stderr, "agentstream %s: interrupted\n", cmd)
		return exitAborted
	}
	fmt.Fprintf(e.stderr, "agentstream %s: %v\n", cmd, err)
	return exitError
}

// ctxReader reads r so that a Read gives up, with ctx's error, when ctx
// is done. r's Read runs in a goroutine, into the ctxReader's own buffer,
// and the goroutine ends once it has a result; one left blocked by a
// cancelled Read (a terminal with no line coming) is waited for by the
// next Read, or ends with the process. Not for concurrent use.
type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	buf     [32 << 10]byte
	rest    []byte          // read from r, not yet returned
	err     error           // r's error, returned once rest is empty
	pending chan readResult // the read under way, if any
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(c.rest) > 0 {
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.pending == nil {
		ch := make(chan readResult, 1)
		go func() {
			n, err := c.r.Read(c.buf[:])
			ch <- readResult{n, err}
		}()
		c.pending = ch
	}
	select {
	case res := <-c.pending:
		c.pending = nil
		n := copy(p, c.buf[:res.n])
		c.rest, c.err = c.buf[n:res.n], res.err
		if len(c.rest) == 0 {
			return n, res.err
		}
		return n, nil
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
