// Package interop proves rpcload against real JSON-RPC 2.0 servers from
// other projects: go-ethereum's rpc package (HTTP, WebSocket, IPC-style
// stream; and a soak of servers/geth, a process serving go-ethereum's own
// metrics), creachadair/jrpc2 (TCP with newline and Content-Length framing;
// servers/jrpc2tcp for the fuzz tests, a process rpcfuzz starts and restarts),
// the MCP servers of mark3labs/mcp-go and modelcontextprotocol/go-sdk
// (stdio and Streamable HTTP, servers/), the TypeScript MCP reference server
// @modelcontextprotocol/server-everything from npm (node/), and the Go
// language server gopls over stdio.
//
// It is a separate Go module so that the main module does not depend on
// those servers. The tests build the real rpcload binary from the parent
// directory, start each server in-process on 127.0.0.1 (or a Unix socket in
// a temporary directory) or as a child process, run the binary against it
// for a bounded time and judge the result file it writes. Where a server
// breaks a rule of a specification, the test lists the violation it expects,
// with the section broken, instead of hiding it. The servers from outside
// the Go module graph are installed by ../.ci/interop-deps; a test whose
// server is missing is skipped, unless RPCLOAD_INTEROP_STRICT=1 (as in CI).
package interop
