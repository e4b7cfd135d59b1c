// Package fuzztarget is a JSON-RPC 2.0 server with planted parser bugs: the
// known answers the fuzzers (the black-box engine and the native harness) are
// tested against. With no bug planted, or on input that triggers none, it is
// a correct server; a planted bug crashes it (a panic naming the bug) or
// hangs it on one precise kind of input.
//
// The server reads frames with its own small tokenizer, not encoding/json,
// because the bugs live in the parser: a real parser crashes in the middle of
// the text, so a crash fires where the tokenizer meets its trigger, even when
// the frame would turn out invalid further on.
//
// # Answers
//
// Methods: echo (the result is params exactly as sent, null without params)
// and add, with params [a,b] or {"a":a,"b":b} (numbers; exact while the
// integers fit int64, else float64). Everything else follows the JSON-RPC 2.0
// rules: -32700 with id null for text that is not JSON (invalid UTF-8
// included; nesting deeper than 10,000 containers is refused as
// encoding/json does); -32600 for JSON that is not a valid request, with the
// request's id when it is a string or number and null otherwise (a
// duplicated envelope member, a missing or wrong "jsonrpc", a method that is
// not a string, params that are not an array or object, result or error
// members); -32601 for other methods (the name as data); -32602 for bad add
// params. A valid notification gets no reply, even when its call would fail.
// A batch is answered with an array that leaves out the notifications,
// nothing when it held only notifications, and [] is one -32600 with id
// null. Members other than jsonrpc, id, method and params are ignored.
//
// # Planted bugs
//
// Each bug is one bit of Bug; its name is what ParseBugs accepts. Triggers,
// checked in document order (the first one met decides):
//
//	deep_nesting    a container nested deeper than 64 anywhere in the frame
//	                (the top-level object or array is depth 1): crash
//	lone_surrogate  a string (member names too) with a \uD800-\uDBFF escape
//	                not followed by a \uDC00-\uDFFF escape, or a low one alone:
//	                crash
//	duplicate_key   an object anywhere with a member name twice (names
//	                compared after decoding escapes): crash
//	big_batch       a top-level array of more than 1000 elements: crash when
//	                the tokenizer reaches element 1001
//	huge_id         an "id" member of an envelope (the frame's object or a
//	                batch element) that is an integer outside int64 (>= 2^63
//	                or < -2^63), or any number with more than 20 digits in its
//	                integer and fraction parts: crash
//	hang            a request whose id is written -0 and whose method is the
//	                empty string: no answer (two edits of any seed request,
//	                from the id and method edge sets; no dictionary needed)
//	null_batch      a batch (a top-level array) with an element that is
//	                null, as in the six bytes [null]: crash
//
// The first four fire while the frame is being tokenized; huge_id and hang
// fire on a syntactically valid frame, envelope by envelope. A crash is a
// panic with a Crash value, whose message is "fuzztarget: planted bug NAME".
// Handle lets it through (the in-process harness sees the panic);
// ServeStream returns it as an error (a child process turns it into exit
// status 2); HTTPHandler lets it through to net/http, which logs it and
// aborts the connection (the client sees EOF or a reset). A hang blocks
// Handle until its context ends, makes ServeStream stop answering until the
// connection ends, and holds an HTTP request until the client gives up.
//
// A server made with ExitOnCrash is a process of its own that a crash
// ends, as an unrecovered panic ends a Go server: over HTTP and TCP the
// crash is re-panicked on a goroutine of its own, so the process exits with
// status 2 and the panic on stderr. Tests re-execute their binary as such a
// server to fuzz a network server that dies and must be restarted.
package fuzztarget
