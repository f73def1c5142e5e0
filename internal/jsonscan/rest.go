package jsonscan

// Complete reports whether the iteration reached the object's closing brace
// without error and only whitespace follows it in the slice given to Object:
// together with a full iteration, proof that the slice is one valid JSON
// object.
func (o *Obj) Complete() bool {
	return o.state == iterDone && skipWS(o.data, o.pos) == len(o.data)
}
