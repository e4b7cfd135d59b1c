// Package interop proves rpcload against real JSON-RPC 2.0 servers from
// other projects: go-ethereum's rpc package (HTTP, WebSocket, IPC-style
// stream) and creachadair/jrpc2 (TCP with newline and Content-Length
// framing).
//
// It is a separate Go module so that the main module does not depend on
// those servers. The tests build the real rpcload binary from the parent
// directory, start each server in-process on 127.0.0.1 (or a Unix socket in
// a temporary directory), run the binary against it for a bounded time and
// judge the result file it writes. Where a server breaks a rule of the
// JSON-RPC 2.0 specification, the test lists the violation it expects
// instead of hiding it.
package interop
