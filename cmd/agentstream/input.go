package main

import (
	"bufio"
	"bytes"
	"errors"
	"unicode/utf8"
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
