package jsonscan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// walkLazy descends into every object and array in place and appends each
// scalar it meets; it reports whether the whole value was well-formed.
func walkLazyObj(o *Obj, out *[]string) bool {
	for o.NextKey() {
		*out = append(*out, "k:"+string(o.Key()))
		if c, ok := o.Object(); ok {
			walkLazyObj(&c, out)
			if !o.LeaveObject(&c) {
				return false
			}
			continue
		}
		if c, ok := o.Array(); ok {
			walkLazyArr(&c, out)
			if !o.LeaveArray(&c) {
				return false
			}
			continue
		}
		v := o.Value()
		if v == nil {
			return false
		}
		*out = append(*out, string(v))
	}
	return o.Err() == nil
}

func walkLazyArr(a *Arr, out *[]string) bool {
	for a.NextElem() {
		if c, ok := a.Object(); ok {
			walkLazyObj(&c, out)
			if !a.LeaveObject(&c) {
				return false
			}
			continue
		}
		if c, ok := a.Array(); ok {
			walkLazyArr(&c, out)
			if !a.LeaveArray(&c) {
				return false
			}
			continue
		}
		v := a.Value()
		if v == nil {
			return false
		}
		*out = append(*out, string(v))
	}
	return a.Err() == nil
}

// walkEager does the same with the scanning iterators and Value slices.
func walkEagerObj(v []byte, out *[]string) bool {
	o, _ := Object(v)
	for o.Next() {
		*out = append(*out, "k:"+string(o.Key()))
		walkEager(o.Value(), out)
	}
	return o.Err() == nil
}

func walkEager(v []byte, out *[]string) {
	switch KindOf(v) {
	case KindObject:
		walkEagerObj(v, out)
	case KindArray:
		a, _ := Array(v)
		for a.Next() {
			walkEager(a.Value(), out)
		}
	default:
		*out = append(*out, string(v))
	}
}

func descendCases(t testing.TB) [][]byte {
	cases := [][]byte{
		[]byte(`{}`), []byte(`{"a":{"b":[1,{"c":"d\"e"},[],[[]]],"f":null},"g":true}`),
		[]byte(`{"a":{"b":1}`), []byte(`{"a":[1,2}`), []byte(`{"a":{"b":tru}}`), []byte(`{"a":{"b":"x}}`),
		[]byte(`{"a" : { "b" : [ 1 , 2 ] } , "c" : "d" }`), []byte(`{"a":{}x}`),
	}
	// Recorded Claude Code sessions, kept in the claude adapter's test data.
	var files []string
	for _, g := range []string{"../../adapter/claude/testdata/*.jsonl", "../../adapter/claude/testdata/corpus/*.jsonl"} {
		m, _ := filepath.Glob(g)
		if len(m) == 0 {
			t.Fatalf("no recordings match %s", g)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) > 0 && l[0] == '{' && len(l) < 20000 {
				cases = append(cases, l, l[:len(l)/2], l[:len(l)-1])
			}
		}
	}
	return cases
}

// TestDescendAgreesWithScanning checks that descending in place reads the
// same keys and scalars as the scanning iterators, and fails on exactly the
// malformed inputs.
func TestDescendAgreesWithScanning(t *testing.T) {
	for _, c := range descendCases(t) {
		var lazy, eager []string
		o, _ := Object(c)
		okLazy := walkLazyObj(&o, &lazy) && o.state == iterDone
		okEager := walkEagerObj(c, &eager)
		eo, _ := Object(c)
		for eo.Next() {
		}
		okEager = okEager && eo.state == iterDone
		if okLazy != okEager {
			t.Errorf("%.80s: lazy ok=%v, scanning ok=%v", c, okLazy, okEager)
			continue
		}
		if okLazy && !equalStrings(lazy, eager) {
			t.Errorf("%.80s: lazy read %q, scanning read %q", c, lazy, eager)
		}
		if okLazy != (Valid(c)) {
			t.Errorf("%.80s: lazy ok=%v, Valid=%v", c, okLazy, Valid(c))
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzDescend(f *testing.F) {
	for _, c := range descendCases(f) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var lazy []string
		o, ok := Object(data)
		if !ok {
			return
		}
		okLazy := walkLazyObj(&o, &lazy) && o.state == iterDone && skipWS(data, o.pos) == len(data)
		if okLazy != Valid(data) {
			t.Fatalf("lazy ok=%v, Valid=%v for %q", okLazy, Valid(data), data)
		}
	})
}
