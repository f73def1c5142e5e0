package postgres

// SetFollowHook sets what Follow runs once it has read where the sessions
// stand (nil: nothing).
func SetFollowHook(h func()) { followHook = h }
