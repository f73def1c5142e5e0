package jsonscan

import "bytes"

// AppendStringClip appends the current member's value, which must be a JSON
// string, decoded and clipped to max code points, as the function
// AppendStringClip does. A value not yet scanned (after NextKey) is
// validated, decoded and counted in a single pass instead of being scanned
// first. ok is false when the value is not a string; a malformed string
// makes the iteration fail (see Err) and also gives false.
func (o *Obj) AppendStringClip(dst []byte, max int) (out []byte, total int, truncated bool, ok bool) {
	switch o.state {
	case iterItem:
		return AppendStringClip(dst, o.data[o.vs:o.ve], max)
	case iterLazy:
		if o.data[o.vs] != '"' {
			return dst, 0, false, false
		}
		max = builtinMax(max, 0)
		out, end, total, code := clipString(dst, o.data, o.vs, max)
		if code != errNone {
			o.fail(end, code)
			return dst, 0, false, false
		}
		o.ve, o.pos, o.state = end, end, iterItem
		return out, total, total > max, true
	}
	return dst, 0, false, false
}

// AppendString appends the current member's value, which must be a JSON
// string, decoded as the function AppendString does; a value not yet
// scanned is validated and decoded in one pass. ok is false when the value
// is not a string; a malformed string makes the iteration fail (see Err)
// and also gives false.
func (o *Obj) AppendString(dst []byte) (out []byte, ok bool) {
	switch o.state {
	case iterItem:
		return AppendString(dst, o.data[o.vs:o.ve])
	case iterLazy:
		if o.data[o.vs] != '"' {
			return dst, false
		}
		out, end := appendDecodedString(dst, o.data, o.vs+1)
		if end < 0 {
			o.fail(stringError(o.data, o.vs))
			return dst, false
		}
		o.ve, o.pos, o.state = end, end, iterItem
		return out, true
	}
	return dst, false
}

// StringAt decodes the JSON string whose opening quote is data[i],
// appending it to dst as AppendString does, and returns the index just past
// its closing quote. ok is false, and dst unchanged, when no valid string
// starts there.
func StringAt(dst, data []byte, i int) (out []byte, end int, ok bool) {
	if i < 0 || i >= len(data) || data[i] != '"' {
		return dst, 0, false
	}
	out, end = appendDecodedString(dst, data, i+1)
	if end < 0 {
		return dst, 0, false
	}
	return out, end, true
}

// SkipString returns the index just past the JSON string whose opening
// quote is data[i], checked as Skip checks it, without decoding it; ok is
// false when no valid string starts there.
func SkipString(data []byte, i int) (end int, ok bool) {
	if i < 0 || i >= len(data) || data[i] != '"' {
		return 0, false
	}
	end, _, code := scanString(data, i)
	return end, code == errNone
}

// StringClipAt is StringAt decoding at most max code points, as
// AppendStringClip does: total is the number of code points of the whole
// string, and truncated tells whether it had more than max.
func StringClipAt(dst, data []byte, i, max int) (out []byte, end, total int, truncated, ok bool) {
	if i < 0 || i >= len(data) || data[i] != '"' {
		return dst, 0, 0, false, false
	}
	max = builtinMax(max, 0)
	out, end, total, code := clipString(dst, data, i, max)
	if code != errNone {
		return dst, 0, 0, false, false
	}
	return out, end, total, total > max, true
}

// ObjectFrom returns an iterator over the object in data whose members up to
// pos were read by other means: pos is just past a member's value, and
// NextKey or Next go on with the member after it. The caller vouches for the
// bytes before pos; Complete and Err speak only of those after.
func ObjectFrom(data []byte, pos int) Obj {
	return Obj{data: data, pos: pos, state: iterItem}
}

// SkipCopy moves past the current member's value without scanning it when
// the value is v byte for byte, v being a string this or another iterator
// has already checked in full (its Value): the same bytes are the same valid
// string. It reports whether it did; otherwise the member is left as it was.
func (o *Obj) SkipCopy(v []byte) bool {
	if o.state != iterLazy || !closedString(v) || !bytes.HasPrefix(o.data[o.vs:], v) {
		return false
	}
	end := o.vs + len(v)
	o.ve, o.pos, o.state = end, end, iterItem
	return true
}

// closedString reports whether v starts with a quote and ends with an
// unescaped one: a cheap guard, the rest being SkipCopy's contract.
func closedString(v []byte) bool {
	n := len(v)
	if n < 2 || v[0] != '"' || v[n-1] != '"' {
		return false
	}
	k := n - 1
	for k > 1 && v[k-1] == '\\' {
		k--
	}
	return (n-1-k)%2 == 0
}
