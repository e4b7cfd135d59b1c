// Package testsrv is the reference JSON-RPC 2.0 server: the target rpcload
// load-tests when none is given, and the server the test-suite uses to prove
// every check of the load tester. A fault-free Server is correct (a run shows
// no protocol violations) and fast (it answers on the TCP path without
// allocating), and it can misbehave on purpose, in counted and reproducible
// ways, so that each check can be shown to fire.
//
// # Methods
//
// Params are accepted by name (object) or by position (array); all listed
// params are required, and missing, extra, unknown or repeated ones are
// -32602 with a data string saying what is wrong.
//
//	lookup_weather {city}       {"city":city,"temp_c":11} after 300 ms
//	convert {value, factor}     value*factor after 100 ms
//	get_time                    "HH:MM", UTC, from Config.Now
//	echo                        params exactly as sent (null without params)
//	add [a,b] | {a,b}           a+b
//	sleep {ms} | [ms]           true after ms milliseconds (0..600000), from a timer
//	spin {us} | [us]            true after busy-waiting us microseconds (0..1e6)
//	eth_blockNumber             "0x…", 1 at start, +1 per second of Config.Now
//	eth_chainId                 "0x539"
//
// Integer arithmetic is exact while it fits int64; otherwise float64, printed
// like encoding/json. Unknown methods (rpc.* included) are -32601 with the name
// as data. Invalid requests follow the JSON-RPC 2.0 rules: -32700 with id null
// for text that is not JSON (or not UTF-8); -32600 for valid JSON that is not
// a valid request, with the request's id when it is a string or number and
// null otherwise; `[]` is one -32600; a batch is answered with an array without
// the notifications' entries, and not at all when it held only notifications.
// Members other than the five of a request are ignored.
//
// # Transports
//
// Byte streams (ServeStream on a TCP or Unix socket listener, ServeTCP,
// ServeStdio on a reader/writer pair such as a child's stdin and stdout) are
// framed one of two ways (Framing): newline-delimited JSON, one frame per
// line, or the LSP base protocol, "Content-Length: N" headers (Content-Type
// optional), a blank line and N bytes. Replies are framed like requests and
// leave in completion order, any number of requests in flight; slow methods
// are answered from a per-connection timer heap by the connection's writer
// goroutine, never by a blocked goroutine per request. When the client closes
// its side (half-close, EOF on stdin, a WebSocket close frame), pending
// replies are still delivered before the server closes. WSHandler serves
// WebSocket, one message per text message, the same way; Handler serves HTTP
// POST, one frame per body, and WebSocket upgrades on /ws. Listen serves any
// mix of them on the addresses of an Addrs.
//
// A frame over Config.MaxFrame is answered with -32600 "request too large" and
// id null, after which a stream is closed (its framing is lost); on HTTP it is
// a 413 with that error as body; on WebSocket, close status 1009 (message too
// big) after the earlier replies. A Content-Length header the server cannot
// read (no or a non-numeric length, two different lengths, a line that is no
// header, a header block over 8 KiB, the stream ending inside a frame) is
// answered with -32700, id null and a data string naming the problem, then
// the stream is closed. An empty Content-Length body is an ordinary -32700.
//
// # Faults
//
// Config.Faults are tried in order for every frame; the first that applies to
// the frame and wins its coin flip is injected, so a frame gets at most one.
// Decisions come from a PCG seeded with Seed plus the connection index, so a
// single connection replays exactly. Injected counts a fault when it takes
// effect: when the reply is written (or handed to the socket writer), when the
// request is dropped, or when the connection is closed.
//
// Faults that change one reply (unknown_id, id_type, both, neither,
// bad_version, bad_error, null_id) change the first eligible element of a
// batch. unknown_id needs a string or number id (it invents the integer
// 9000000000000000+n or the string "unknown-n"), null_id the same on a valid
// request, id_type a number or a string that spells one ("7" -> 7); a frame
// without such an id skips them in favour of the next listed fault.
// notify_reply applies only to frames with valid notifications and answers
// each with "id":null (computed as if it were a request); notify_reply_no_id
// does the same with a response that has no id member. Per transport:
//
//	fault             TCP                                  HTTP
//	drop              no reply line                        request held until the client gives up or Close (then aborted)
//	duplicate         the reply line twice                 body = reply "\n" reply (Content-Length covers both)
//	garbage           a line that is not JSON              a body that is not JSON (status 200)
//	invalid_envelope  {"hello":"world"}                    same, as the body
//	notify_reply      a reply line for the notification    200 with a JSON body instead of 204
//	close             when the reply is due: earlier       connection hijacked and closed, no response
//	                  replies flushed, then FIN; nothing
//	                  later is answered (input is drained
//	                  for up to 2 s so no RST eats replies)
//	delay             reply FaultDelay later               same
//
// Unix sockets behave as TCP. Content-Length framing changes only the
// framing: each reply line above is a Content-Length frame instead (so
// garbage and invalid_envelope are properly framed junk, and duplicate is
// the same frame twice). On WebSocket each line is a text message; close
// sends close status 1000 after the earlier replies, then drains like TCP
// until the client answers the close. On stdio, close writes the earlier
// replies, then closes the writer and the reader at once (a pipe cannot
// half-close) and ServeStdio returns nil.
//
// # Stall
//
// Config.Stall stops all delivery for a window measured from New by
// Config.Now: replies due inside it are held and written when it ends.//
// # Protocol modes
//
// Config.Profile ProfileMCP or ProfileLSP makes every stream connection
// (TCP, Unix socket, stdio, WebSocket) speak that protocol instead of the
// methods above, with encoding/json (the plain path is untouched); faults
// and stalls are refused in these modes. MCP (mcp.go) serves ping,
// tools/list and tools/call with the tools echo, add {a,b} and sleep {ms},
// in the eras of Config.MCPEra (modern 2026-07-28, legacy 2025-11-25 and
// older, or dual: decided per connection by the first request), and
// Streamable HTTP on MCPPath of the HTTP listener, answered as
// Config.MCPResponse says. LSP (lsp.go) serves initialize, shutdown/exit,
// documentSymbol, hover, definition and sleep {ms} on the documents a client
// opens, and sends its own requests after initialized. notifications/cancelled
// and $/cancelRequest stop a running sleep. MCPStats and LSPStats count
// exactly what the server saw; WaitMCP and WaitLSP wait for a condition on
// them without polling.
package testsrv
