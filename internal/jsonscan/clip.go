package jsonscan

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

// AppendStringClip is Obj.AppendStringClip for the current element.
func (a *Arr) AppendStringClip(dst []byte, max int) (out []byte, total int, truncated bool, ok bool) {
	switch a.state {
	case iterItem:
		return AppendStringClip(dst, a.data[a.vs:a.ve], max)
	case iterLazy:
		if a.data[a.vs] != '"' {
			return dst, 0, false, false
		}
		max = builtinMax(max, 0)
		out, end, total, code := clipString(dst, a.data, a.vs, max)
		if code != errNone {
			a.fail(end, code)
			return dst, 0, false, false
		}
		a.ve, a.pos, a.state = end, end, iterItem
		return out, total, total > max, true
	}
	return dst, 0, false, false
}
