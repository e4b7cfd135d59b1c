// Package fuzztarget is a JSON-RPC 2.0 server with planted bugs: the
// known answers the fuzzers (the black-box engine and the native harness)
// are tested against. With no bug planted, or on input that triggers none,
// it is a correct server; a planted bug crashes it (a panic naming the bug)
// or hangs it on one precise kind of input. Most bugs live in the parser;
// three live in method handlers, behind an API described by an OpenRPC
// document (rpc.discover) and an MCP tool list (tools/list), for fuzzers
// that make params from a schema.
//
// The server reads frames with its own small tokenizer, not encoding/json,
// because the bugs live in the parser: a real parser crashes in the middle of
// the text, so a crash fires where the tokenizer meets its trigger, even when
// the frame would turn out invalid further on.
//
// # Answers
//
// Everything follows the JSON-RPC 2.0 rules: -32700 with id null for text
// that is not JSON (invalid UTF-8 included; nesting deeper than 10,000
// containers is refused as encoding/json does); -32600 for JSON that is not
// a valid request, with the request's id when it is a string or number and
// null otherwise (a duplicated envelope member, a missing or wrong
// "jsonrpc", a method that is not a string, params that are not an array or
// object, result or error members); -32601 for other methods (the name as
// data); -32602 for bad params, the problem as data (a string). A valid
// notification gets no reply and runs no method, even when its call would
// fail. A batch is answered with an array that leaves out the
// notifications, nothing when it held only notifications, and [] is one
// -32600 with id null. Members other than jsonrpc, id, method and params
// are ignored. countdown and the MCP methods read a member name repeated
// in params (or in its objects) by its last value, as encoding/json would.
//
// Methods (openrpc.json describes add and countdown; a request to any of
// them is first read for MCP's _meta, below):
//
//   - echo: the result is params exactly as sent, null without params.
//   - add: params [a,b] or {"a":a,"b":b} (numbers, no other member); the
//     sum is exact while the integers fit int64, else float64, and -32602
//     beyond float64.
//   - countdown: params {"n": n} by name only, n an integer as JSON Schema
//     reads one (5, 5.0, 5e0), -1000000 <= n <= 1000, no other member; the
//     result is [n, n-1, ..., 0], and [] for n < 0. Anything else (an
//     array, no params, n missing, not an integer or out of range, another
//     member) is -32602.
//   - rpc.discover: with params absent, [] or {}, the OpenRPC 1.2.6
//     document, on one line (else -32602). It lists add and countdown,
//     not itself (rpc.* methods belong to JSON-RPC) nor echo (OpenRPC
//     cannot say that a method takes any params at all). By-name params
//     without other members are marked "x-additionalProperties": false,
//     which OpenRPC has no field for (rpcfuzz reads it).
//
// The MCP methods, in both eras and without a session: each request is
// answered on its own, whatever came before it. One thing a stream
// connection remembers: once it started an MCP session (an initialize or
// a server/discover answered with a result), an array is one -32600 with
// id null, since MCP has no batches (the tokenizer's bugs still fire on
// it; over HTTP every array is a batch).
//
//   - Every request, whatever its method, is read for MCP's per-request
//     _meta first: when its params are an object whose _meta object holds
//     a string io.modelcontextprotocol/protocolVersion, it is a 2026-07-28
//     request. Another version than 2026-07-28 is -32022 (Unsupported
//     protocol version) with data {"requested": version, "supported":
//     ["2026-07-28"]}; a _meta without an object
//     io.modelcontextprotocol/clientCapabilities, or with a
//     io.modelcontextprotocol/clientInfo that is no {name, version}
//     object, is -32602. Every result of an MCP method to a 2026-07-28
//     request carries "resultType":"complete". Other requests are legacy
//     ones.
//   - MCP params must be an object when present, with _meta an object
//     (else -32602).
//   - initialize: params {protocolVersion: string, capabilities: object,
//     clientInfo: {name, version}} (else -32602). The result is
//     {"protocolVersion": V, "capabilities": {"tools": {}}, "serverInfo":
//     {"name": "fuzztarget", "version": "1"}}, V the requested revision
//     when it is 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05, else
//     2025-11-25, the newest revision with initialize.
//   - notifications/initialized, like every notification: no reply.
//   - ping: {}.
//   - server/discover: {"supportedVersions": ["2026-07-28"], "capabilities":
//     {"tools": {}}, "cacheScope": "public", "ttlMs": 0, "_meta":
//     {"io.modelcontextprotocol/serverInfo": {...}}, "resultType":
//     "complete"}. The legacy revisions are not listed: they are
//     negotiated by initialize, not in _meta.
//   - tools/list: {"tools": [search, sum]} (tools.json), plus "cacheScope":
//     "public" and "ttlMs": 0 for a 2026-07-28 request. A cursor is -32602:
//     the list has one page.
//   - tools/call: params {"name": string, "arguments": object} (arguments
//     optional, other members ignored). Params of another shape, or an
//     unknown tool, are -32602. Arguments that break the tool's
//     inputSchema are a tool execution error: the result
//     {"content": [{"type": "text", "text": WHAT IS WRONG}], "isError": true}.
//   - The tool search, arguments {"query": string of at most 200
//     characters, "limit": integer 1..100} (limit optional, no other
//     member): min(limit, 3) hits "QUERY #1", "QUERY #2", ..., as
//     "structuredContent": {"hits": [...]} and as its JSON in a text block.
//   - The tool sum, arguments {"values": [numbers]} (no other member): a
//     text block with the sum, exact while every value is an integer
//     literal and the sum fits int64, else float64, written +Inf, -Inf or
//     NaN beyond its range.
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
//	negative_int    a countdown request whose params fit its schema and
//	                whose n is negative (-1000000 to -1): crash
//	empty_string    a tools/call request of search whose arguments fit its
//	                inputSchema and whose query is "": crash
//	long_array      a tools/call request of sum whose arguments fit its
//	                inputSchema and hold more than 1000 values: crash
//
// The first four fire while the frame is being tokenized; huge_id and hang
// fire on a syntactically valid frame, envelope by envelope; the last three
// in the handler of a request, after its params are validated, so only
// params that fit the schema reach them (Bugs returns the first seven,
// HandlerBugs the last three). A crash is a
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
