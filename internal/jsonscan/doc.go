// Package jsonscan is a small, allocation-free, schema-directed JSON scanner.
//
// It is meant for pulling a handful of fields out of untrusted, line-oriented
// JSON (for example the stream-json output of coding-agent CLIs) without
// decoding whole documents into Go values. Callers walk objects and arrays
// with [Obj] and [Arr], look members up with [Get] and [GetPath], and convert
// the raw values they care about with [String], [StringClip], [Int],
// [Float], [Bool] and friends. Raw values are sub-slices of the input whose
// capacity is cut at their end, so appending to one never overwrites the
// input; the package never keeps a reference to the input after a call
// returns (an [Obj] or [Arr] refers to it only while it is in use).
//
// # Robustness
//
// No function in this package panics on any input, and none of them
// recurses: nesting is tracked with an explicit bit stack, so arbitrarily
// deep documents (hundreds of thousands of levels) are scanned in linear time
// with a small, constant amount of goroutine stack.
//
// # Validation and leniency
//
// [Skip], [Valid], the iterators and the compaction functions validate the
// JSON grammar: literals must be spelled exactly, numbers must follow the
// JSON number grammar, brackets must match, string escapes must be one of
// \" \\ \/ \b \f \n \r \t or \u followed by four hexadecimal digits.
//
// Two deliberate leniencies apply inside strings, both for speed and because
// they cannot confuse a reader of the token structure:
//
//   - raw control characters (bytes below 0x20) are accepted, whereas RFC 8259
//     requires them to be escaped;
//   - invalid UTF-8 is accepted (as it is by encoding/json).
//
// Apart from raw control characters inside strings, [Valid] agrees with
// encoding/json's Valid. Decoding functions replace invalid UTF-8 bytes and
// unpaired surrogate escapes with U+FFFD exactly like encoding/json does,
// and [AppendSanitized] rewrites a document so that it is accepted by any
// strict parser.
//
// Numbers that are syntactically valid but out of range (1e999,
// 99999999999999999999) are valid JSON; [Int] and [Float] report false for
// them.
package jsonscan
