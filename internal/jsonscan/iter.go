package jsonscan

// Iterator states shared by Obj and Arr. The zero value (iterIdle) reports
// no members and no error.
const (
	iterIdle uint8 = iota
	iterStart
	iterItem
	iterLazy // a member or element whose value has not been scanned yet
	iterDone
	iterFailed
)

// Obj iterates the members of a JSON object without allocating. Every
// member value is validated as the iteration passes over it, so iterating to
// the end and then finding Err() == nil proves the object well-formed. Bytes
// after the closing brace are not examined.
//
//	o, ok := jsonscan.Object(line)
//	for o.Next() {
//		if o.KeyIs("type") { ... o.Value() ... }
//	}
//	if err := o.Err(); err != nil { ... }
type Obj struct {
	data   []byte
	pos    int // scan position: after '{', after the last value, or after '}'
	ks, ke int // current key, without the quotes
	vs, ve int // current value
	state  uint8
	esc    bool // the current key contains a backslash
	code   errCode
}

// Object starts iterating the object v. It returns false when v, with
// leading whitespace skipped, does not start with '{'.
func Object(v []byte) (Obj, bool) {
	i := skipWS(v, 0)
	if i >= len(v) || v[i] != '{' {
		return Obj{}, false
	}
	return Obj{data: v, pos: i + 1, state: iterStart}, true
}

// Next advances to the next member. It returns false at the end of the
// object or when the object is malformed (see Err).
func (o *Obj) Next() bool {
	if o.state == iterLazy && !o.settle() {
		return false
	}
	return o.next(false)
}

// NextKey advances to the next member like Next, but leaves the member's
// value unscanned: Value scans it when asked, and Object or Array iterate it
// in place, so that a value descended into is read once rather than once
// per level of nesting.
func (o *Obj) NextKey() bool {
	if o.state == iterLazy && !o.settle() {
		return false
	}
	return o.next(true)
}

// settle scans the value of the current lazy member.
func (o *Obj) settle() bool {
	end, code := skip(o.data, o.vs)
	if code != errNone {
		return o.fail(end, code)
	}
	o.ve, o.pos, o.state = end, end, iterItem
	return true
}

func (o *Obj) next(lazy bool) bool {
	data := o.data
	i := skipWS(data, o.pos)
	switch o.state {
	case iterStart:
		if i < len(data) && data[i] == '}' {
			o.state, o.pos = iterDone, i+1
			return false
		}
	case iterItem:
		if i >= len(data) {
			return o.fail(len(data), errEOF)
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			o.state, o.pos = iterDone, i+1
			return false
		default:
			return o.fail(i, errAfterMember)
		}
	default:
		return false
	}
	if i >= len(data) {
		return o.fail(len(data), errEOF)
	}
	if data[i] != '"' {
		return o.fail(i, errKey)
	}
	end, tails, code := scanString(data, i)
	if code != errNone {
		return o.fail(end, code)
	}
	o.ks, o.ke, o.esc = i+1, end-1, tails > 0
	i = skipWS(data, end)
	if i >= len(data) {
		return o.fail(len(data), errEOF)
	}
	if data[i] != ':' {
		return o.fail(i, errColon)
	}
	i = skipWS(data, i+1)
	if lazy {
		if i >= len(data) {
			return o.fail(len(data), errEOF)
		}
		o.vs, o.state = i, iterLazy
		return true
	}
	end, code = skip(data, i)
	if code != errNone {
		return o.fail(end, code)
	}
	o.vs, o.ve, o.pos, o.state = i, end, end, iterItem
	return true
}

func (o *Obj) fail(off int, code errCode) bool {
	o.state, o.pos, o.code = iterFailed, off, code
	return false
}

// Key returns the raw bytes of the current member's key, between the quotes
// and still escaped. It returns nil when there is no current member.
func (o *Obj) Key() []byte {
	if o.state != iterItem && o.state != iterLazy {
		return nil
	}
	return o.data[o.ks:o.ke:o.ke]
}

// KeyIs reports whether the decoded key of the current member equals name.
// The comparison is exact (case-sensitive) and does not allocate; keys
// without escapes are compared directly.
func (o *Obj) KeyIs(name string) bool {
	if o.state != iterItem && o.state != iterLazy {
		return false
	}
	return equalDecoded(o.data[o.ks:o.ke], o.esc, name)
}

// Value returns the raw bytes of the current member's value, without
// surrounding whitespace, or nil when there is no current member.
func (o *Obj) Value() []byte {
	if o.state == iterLazy && !o.settle() {
		return nil
	}
	if o.state != iterItem {
		return nil
	}
	return o.data[o.vs:o.ve:o.ve]
}

// Err returns a *SyntaxError if the object was found to be malformed, and
// nil otherwise. Offsets are relative to the slice given to Object.
func (o *Obj) Err() error {
	if o.state != iterFailed {
		return nil
	}
	return newSyntaxError(o.data, o.pos, o.code)
}

// Arr iterates the elements of a JSON array without allocating. Like Obj,
// it validates each element as it passes over it.
type Arr struct {
	data   []byte
	pos    int
	vs, ve int
	state  uint8
	code   errCode
}

// Array starts iterating the array v. It returns false when v, with leading
// whitespace skipped, does not start with '['.
func Array(v []byte) (Arr, bool) {
	i := skipWS(v, 0)
	if i >= len(v) || v[i] != '[' {
		return Arr{}, false
	}
	return Arr{data: v, pos: i + 1, state: iterStart}, true
}

// Next advances to the next element. It returns false at the end of the
// array or when the array is malformed (see Err).
func (a *Arr) Next() bool {
	if a.state == iterLazy && !a.settle() {
		return false
	}
	return a.next(false)
}

// NextElem advances to the next element like Next, but leaves it unscanned,
// as Obj.NextKey does.
func (a *Arr) NextElem() bool {
	if a.state == iterLazy && !a.settle() {
		return false
	}
	return a.next(true)
}

func (a *Arr) settle() bool {
	end, code := skip(a.data, a.vs)
	if code != errNone {
		return a.fail(end, code)
	}
	a.ve, a.pos, a.state = end, end, iterItem
	return true
}

func (a *Arr) next(lazy bool) bool {
	data := a.data
	i := skipWS(data, a.pos)
	switch a.state {
	case iterStart:
		if i < len(data) && data[i] == ']' {
			a.state, a.pos = iterDone, i+1
			return false
		}
	case iterItem:
		if i >= len(data) {
			return a.fail(len(data), errEOF)
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case ']':
			a.state, a.pos = iterDone, i+1
			return false
		default:
			return a.fail(i, errAfterElem)
		}
	default:
		return false
	}
	if lazy {
		if i >= len(data) {
			return a.fail(len(data), errEOF)
		}
		a.vs, a.state = i, iterLazy
		return true
	}
	end, code := skip(data, i)
	if code != errNone {
		return a.fail(end, code)
	}
	a.vs, a.ve, a.pos, a.state = i, end, end, iterItem
	return true
}

func (a *Arr) fail(off int, code errCode) bool {
	a.state, a.pos, a.code = iterFailed, off, code
	return false
}

// Value returns the raw bytes of the current element, without surrounding
// whitespace, or nil when there is no current element.
func (a *Arr) Value() []byte {
	if a.state == iterLazy && !a.settle() {
		return nil
	}
	if a.state != iterItem {
		return nil
	}
	return a.data[a.vs:a.ve:a.ve]
}

// Err returns a *SyntaxError if the array was found to be malformed, and nil
// otherwise. Offsets are relative to the slice given to Array.
func (a *Arr) Err() error {
	if a.state != iterFailed {
		return nil
	}
	return newSyntaxError(a.data, a.pos, a.code)
}

// Get returns the raw value of the last member named key in the object v
// (JSON.parse semantics for duplicate keys). It returns nil when the member
// is absent or v is not exactly one valid object (surrounding whitespace
// allowed).
func Get(v []byte, key string) []byte {
	o, ok := Object(v)
	if !ok {
		return nil
	}
	var val []byte
	for o.Next() {
		if o.KeyIs(key) {
			val = o.Value()
		}
	}
	if o.state != iterDone || skipWS(v, o.pos) != len(v) {
		return nil
	}
	return val
}

// GetPath follows nested object keys, so GetPath(v, "message", "usage") is
// Get(Get(v, "message"), "usage"). With no keys it returns v without
// surrounding whitespace if v is valid JSON, and nil otherwise.
func GetPath(v []byte, keys ...string) []byte {
	if len(keys) == 0 {
		if !Valid(v) {
			return nil
		}
		return TrimSpace(v)
	}
	for _, k := range keys {
		if v = Get(v, k); v == nil {
			return nil
		}
	}
	return v
}
