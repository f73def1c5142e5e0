// Package agentstream is the vocabulary of agentstream: the events that every
// harness adapter produces, the envelope that stores and readers share, and the
// small pieces around them that every program needs.
//
// A coding-agent CLI (a harness) prints its progress on stdout in its own JSON
// dialect. An adapter (package adapter and its subpackages) translates each
// line into zero or more [Event] values. A [Normalizer] wraps an adapter's
// [Decoder] with the rules that hold for every dialect: line numbers, dense
// sequence numbers, turn numbering, recovery from a panicking adapter, and the
// flush of live deltas that never got their complete event. The resulting
// [Envelope] values go to a [Handler]: a console renderer, a store, a live hub.
//
// The format itself is specified in docs/format.md. This package imports only
// the standard library and the module's own standard-library-only JSON
// scanner.
package agentstream
