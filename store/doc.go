// Package store holds the plain types of a session store and the interface
// the HTTP API reads and ingests through, with the rules that hold for every
// store: what a session's events make of its record (Record), how a stored
// event is kept and compared (AppendBody, SameLine, ErrConflict), and when a
// writer counts as gone (Owner.Gone). The embedded implementation is package
// store/sqlite, the shared one store/postgres; both pass the conformance
// suite store/storetest. The live fan-out of what a store commits is
// package hub.
//
// The store keeps, for each session, its record ([Session]), its stored
// events (dense seq from 1, live deltas excluded) and its native lines, so
// that a session can be read back, exported byte for byte, and
// re-normalized by a newer adapter.
package store
