// Package gen turns the params templates of a scenario into JSON, request by
// request, and loads the feeders (CSV and JSONL tables) templates read from.
//
// A template is a decoded YAML or JSON value. Most of it is literal; a
// mapping whose only key starts with "$" is a generator:
//
//	{$int: [min, max]}               int64, uniform in [min, max]
//	{$float: [min, max]}             float64, uniform in [min, max) (min when min == max),
//	                                 written with strconv 'g' -1
//	{$string: N}                     N characters from [a-zA-Z0-9]
//	{$string: {len: N, alphabet: "abc"}}
//	{$string: {min: A, max: B, alphabet: "abc"}}   length uniform in [A, B] (min defaults to 0)
//	{$choice: [v1, v2, ...]}         one of the values, uniformly; each may be a template
//	{$weighted: [{weight: 3, value: v1}, {weight: 1, value: v2}]}
//	                                 weights are non-negative numbers, at least one positive
//	{$seq: S} / {$seq: {start: S, step: K}}   S + (seq-1)*K (defaults 1 and 1; int64, wraps)
//	{$uuid: v4}                      a random RFC 4122 version 4 UUID
//	{$hex: {bytes: N}} / {$hex: N}   "0x" and 2N lowercase hex digits (N = 0 gives "0x")
//	{$hexint: [min, max]}            an Ethereum quantity "0x1a2b", uniform in [min, max];
//	                                 bounds are integers or "0x" strings up to 2^64-1
//	{$now: unix|unixms|unixns|rfc3339}   the clock (see below)
//	{$feed: "name.column"}           a column of feeder name, in this request's row
//	{$feed: "name"}                  the whole row as a JSON object
//
// A mapping with a "$" key and other keys is an error, so a misspelt
// generator never turns silently into literal params; a literal key that
// starts with "$" is written "$$" ("$$gt" is the key "$gt"). Mapping keys are
// written sorted, like encoding/json, because the decoded maps the caller
// hands over have no order.
//
// # Reproducibility
//
// Every random choice is drawn from the *rand.Rand given to [Template.Append],
// in a fixed order: first one row for each random-mode feeder the template
// reads (in the order the template first mentions them), then the generators
// in document order (only those of the branch a $choice takes). So the bytes
// depend only on the generator's seed and the sequence number, never on the
// goroutine or the timing. The one exception is $now, which reads the clock
// set with [Template.SetClock] (time.Now by default): a replay yields the
// same requests except for those timestamps.
//
// # Feeders
//
// All references to one feeder in one template read the same row for a given
// sequence number, so an address and its balance stay together. Rows are
// picked by mode: "sequential" row (seq-1) mod n, "random" a uniform row,
// "once" row seq-1 until seq passes the last row, when Append reports that the
// run must end.
//
// A CSV column whose every cell is a JSON number (RFC 8259 grammar, so "007",
// "+1", "0x10" and "" are not) is written as numbers; any other column is
// written as strings. The decision is per column rather than per cell so a
// column never mixes JSON types from one request to the next (a token id
// column with one "abc" in it stays all strings). JSONL values are written
// as their JSON (compacted); a key missing from a row reads as null and is
// left out of the whole-row object.
//
// # Speed
//
// Compile pre-renders every constant subtree into bytes, so Append runs a
// short list of operations that mostly copy; it does not allocate once the
// destination buffer has room (a template that reads more than eight
// distinct feeders allocates one small slice per call).
package gen
