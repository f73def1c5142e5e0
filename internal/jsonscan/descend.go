package jsonscan

// Descending into a value in place. After NextKey (or NextElem) the current
// value has not been scanned; Object or Array start an iterator over it that
// shares the parent's input, and Leave, called when the child is done with,
// moves the parent past the value: the child is run to its end first, so
// every byte is still validated, once.
//
//	o, _ := jsonscan.Object(line)
//	for o.NextKey() {
//		if o.KeyIs("message") {
//			if m, ok := o.Object(); ok {
//				for m.NextKey() { … }
//				o.LeaveObject(&m)
//			}
//		}
//	}

// Object returns an iterator over the current member's value, which must be
// an object not yet scanned (after NextKey). It returns false otherwise, and
// the value is then scanned by the parent's next step as usual.
func (o *Obj) Object() (Obj, bool) {
	if o.state != iterLazy || o.data[o.vs] != '{' {
		return Obj{}, false
	}
	return Obj{data: o.data, pos: o.vs + 1, state: iterStart}, true
}

// Array returns an iterator over the current member's value, which must be
// an array not yet scanned (after NextKey).
func (o *Obj) Array() (Arr, bool) {
	if o.state != iterLazy || o.data[o.vs] != '[' {
		return Arr{}, false
	}
	return Arr{data: o.data, pos: o.vs + 1, state: iterStart}, true
}

// Object returns an iterator over the current element, which must be an
// object not yet scanned (after NextElem).
func (a *Arr) Object() (Obj, bool) {
	if a.state != iterLazy || a.data[a.vs] != '{' {
		return Obj{}, false
	}
	return Obj{data: a.data, pos: a.vs + 1, state: iterStart}, true
}

// Array returns an iterator over the current element, which must be an
// array not yet scanned (after NextElem).
func (a *Arr) Array() (Arr, bool) {
	if a.state != iterLazy || a.data[a.vs] != '[' {
		return Arr{}, false
	}
	return Arr{data: a.data, pos: a.vs + 1, state: iterStart}, true
}

// finish runs a child iterator to its end and reports where it ended, or
// the error that stopped it.
func finishObj(c *Obj) (end int, code errCode) {
	for c.Next() {
	}
	if c.state == iterFailed {
		return c.pos, c.code
	}
	return c.pos, errNone
}

func finishArr(c *Arr) (end int, code errCode) {
	for c.Next() {
	}
	if c.state == iterFailed {
		return c.pos, c.code
	}
	return c.pos, errNone
}

// LeaveObject moves o past the member value that c, from o.Object,
// iterated. It reports false when the value was malformed (o.Err says how).
func (o *Obj) LeaveObject(c *Obj) bool { return o.leave(finishObj(c)) }

// LeaveArray moves o past the member value that c, from o.Array, iterated.
func (o *Obj) LeaveArray(c *Arr) bool { return o.leave(finishArr(c)) }

// LeaveObject moves a past the element that c, from a.Object, iterated.
func (a *Arr) LeaveObject(c *Obj) bool { return a.leave(finishObj(c)) }

// LeaveArray moves a past the element that c, from a.Array, iterated.
func (a *Arr) LeaveArray(c *Arr) bool { return a.leave(finishArr(c)) }

func (o *Obj) leave(end int, code errCode) bool {
	if o.state != iterLazy {
		return o.state != iterFailed
	}
	if code != errNone {
		return o.fail(end, code)
	}
	o.ve, o.pos, o.state = end, end, iterItem
	return true
}

func (a *Arr) leave(end int, code errCode) bool {
	if a.state != iterLazy {
		return a.state != iterFailed
	}
	if code != errNone {
		return a.fail(end, code)
	}
	a.ve, a.pos, a.state = end, end, iterItem
	return true
}
