// Package mutate holds rpcfuzz's structure-aware mutations of JSON-RPC
// inputs: a table of small named ops (Ops), the choice sources that drive
// them (NewRand for a seeded run, NewBytes for Go's fuzzer bytes), and a
// Mutator that chains a few ops per input, picked by weights that grow for
// the ops whose outputs produced something new.
//
// An input is a Case: the frames sent in order on one connection, and for
// the framing ops the exact stream bytes. Ops never modify their input and
// never produce a frame longer than Env.MaxFrame (1 MiB by default): every
// size they derive (string length, nesting depth, batch length) is clamped
// to it, and an output over it counts as "does not apply". Ops work on raw
// bytes where they can; where they need structure they use a tolerant
// jsontree (ordered members so duplicate keys survive, scalars as their raw
// text) rather than encoding/json, which would normalise what the fuzzer
// wants to break.
//
// Sizes come from ladders around common limits. Rungs that make more than a
// few KiB are picked less often in proportion to their size, and an op that
// makes a case big ends its chain, so a Mutate costs microseconds on average
// (the native harness runs thousands per second) while 1 MiB strings and
// 100,000-deep nesting still come up regularly.
//
// # Ops
//
// Framing (set Case.Wire; only for the matching Env.Framing):
//   - content_length_lie: one message's Content-Length header is shorter or longer than its body, huge, negative, not a number, missing, duplicated, or oddly spelled (FramingContentLength).
//   - ndjson_newline: a line break inside one NDJSON message, between tokens or inside a string (FramingNewline).
//
// Lexical:
//   - truncate_structural: the frame cut after a {, [, : or , or inside a string.
//   - invalid_utf8: an invalid UTF-8 sequence (stray continuation, overlong, encoded surrogate, above U+10FFFF, cut short), mostly inside a string.
//   - lone_surrogate: a lone surrogate escape (\ud800, \udfff, a reversed pair, ...) inside a string.
//   - bom_prefix: a byte order mark before the frame (UTF-8, doubled, UTF-16).
//   - control_char: a raw control character U+0000..U+001F inside a string.
//   - nonfinite_number: a value replaced by NaN, Infinity, -Infinity or a non-JSON number spelling (+1, .5, 01, 1., 0x10).
//   - comment: a // or /* */ comment (or an unterminated one) between tokens.
//   - trailing_comma: a comma before a closing } or ].
//   - huge_number: a value replaced by 1e400, -0, 1e-400, 20+ digit integers, 2^53+1, 2^63, 2^64, a 400-digit integer, an absurd exponent.
//   - long_string: a string value replaced by a very long one (1 KiB to 1 MiB; plain, escapes or multibyte).
//   - long_line: whitespace between tokens making a very long line (around 4 KiB, 64 KiB, 1 MiB).
//
// Envelope (jsonrpc, id, method, params; in a batch, one element):
//   - envelope_absent: one of them removed.
//   - envelope_null: one of them set to null.
//   - envelope_type: one of them set to a value of another JSON type, or a near miss of its own ("1.0").
//   - envelope_duplicate: one of them repeated with a conflicting value, before or after the original.
//
// ID:
//   - id_edge: the id set to an edge value: null, "", 0, -0, 1.5, 1e2, 2^53-1, 2^53+1, 2^63, 2^64, 1e400, true, [], {}, a 1 MB string, ...
//
// Method:
//   - method_dictionary: the method set to a name from Env.Methods.
//   - method_empty: the method set to "".
//   - method_rpc_prefix: an rpc.-prefixed method (rpc. + the method, rpc.discover, rpc.).
//   - method_long: a very long method name (256 B to 1 MiB).
//   - method_near_miss: the method with one letter's case changed, the whole case changed, a letter dropped, two swapped, or one added.
//
// Params:
//   - params_absent: params removed.
//   - params_null: params set to null.
//   - params_scalar: params set to a scalar (invalid per the spec).
//   - params_arity: one element or member dropped or added (a copy of a neighbour, a filler, a __proto__ key).
//   - params_duplicate_key: a member of an object inside params repeated with another value.
//   - params_schema_valid: params generated valid for the method's schema in Env.Params (package schemagen).
//   - params_schema_invalid: params generated to break one constraint of that schema.
//   - params_nesting: params nested 2 to 100,000 levels deep (arrays, objects, mixed), in steps around parser limits.
//   - params_wide: params as a wide array (N copies of one filler, N from 0 to 100,000) or a wide object.
//
// Batch:
//   - batch_empty: the frame replaced by [].
//   - batch_invalid: the frame replaced by a batch of non-requests ([1], [null], [1,2,3], ...).
//   - batch_wrap: the frame wrapped in a batch, alone or next to an invalid element.
//   - batch_nested: batches inside batches ([[F]], [F,[F]], [[]], ...).
//   - batch_notifications: a batch of only notifications (the request without its id).
//   - batch_duplicate_ids: a batch of copies of the request under one id.
//   - batch_size: a batch of 9 to 100,000 elements around common limits (10, 100, 1000, 1024, 10000): copies with ids 1..N, or 1, {} or null.
//
// Sequence (whole messages):
//   - seq_skip_handshake: the handshake out of order: the requests before it, no initialized notification, a request first, initialize twice, or its messages reversed (mcp, lsp); the input keeps a handshake message, so it is sent on a connection without the fuzzer's own handshake.
//   - seq_after_shutdown: a request after the shutdown request (lsp; exit is not sent).
//   - seq_cancel_unknown: $/cancelRequest or notifications/cancelled for an id never sent.
//   - seq_same_id_twice: a second request under the id of one still in flight.
//   - seq_notification_flood: 10 to 1000 notifications in a row.
//
// Dictionary and splice:
//   - dict_insert: a JSON-RPC token (member names, error codes, life-cycle methods, Env.Methods, structural bytes) inserted between tokens or at any byte.
//   - dict_replace: a token of the frame replaced by a dictionary token.
//   - splice_subtree: a value of the frame replaced by a value of an Env.Corpus entry.
//   - splice_bytes: a byte range of an Env.Corpus entry inserted into or written over the frame.
package mutate
