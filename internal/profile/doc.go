// Package profile holds what each ecosystem adds on top of plain JSON-RPC
// 2.0: the handshake a connection must exchange before load, the params and
// HTTP headers every call must carry, the answers a client owes to requests
// the server sends, cancellation, shutdown, the id formats allowed, and the
// rules (package check) a reply is judged against beyond the envelope.
//
// Everything here is a pure function of its arguments and of the Options
// given to New: no I/O, no goroutines, no clocks. A Profile is immutable and
// safe for concurrent use. The order of a handshake's Steps, their control
// requests and the era probe are run here (RunSteps, Handshake) on a
// connection the caller implements (StepConn; EraConn when its headers
// depend on the era): rpcload's engine and the fuzzer own the writes, the
// waits and the timeouts. What a profile
// changes in how a fuzzer judges replies is FuzzRules, shared by both
// fuzzers.
//
// # Profiles
//
//   - jsonrpc (the default): nothing is added. Server requests get -32601.
//   - mcp: the Model Context Protocol, in one of two eras. The modern era
//     (revision 2026-07-28) has no handshake and no session: every request
//     carries params._meta with the protocol version, the client
//     capabilities and the client info, and over Streamable HTTP the headers
//     MCP-Protocol-Version, Mcp-Method and Mcp-Name. The legacy era
//     (2025-11-25 and earlier) starts with initialize and
//     notifications/initialized. Options.MCPEra "auto" detects the era per
//     protocols.md §2: see Profile.Probe, DetectFromDiscover, DetectFromHTTP.
//   - lsp: the Language Server Protocol 3.17: initialize/initialized,
//     shutdown/exit, $/cancelRequest, and answers to the server's own
//     requests (workspace/configuration, window/workDoneProgress/create,
//     client/registerCapability, ...).
//   - eth: Ethereum execution clients: plain JSON-RPC with integer ids.
//
// # Eras
//
// An Era is the MCP revision a connection speaks. It is passed explicitly to
// every method whose answer depends on it, so a profile never holds
// per-connection state. An MCP legacy connection may end up on an older
// revision than the one it asked for: the initialize Step's Accept returns
// the revision the server chose, and that era is what the connection passes
// from then on (it decides the MCP-Protocol-Version header, for example).
//
// # Encoding
//
// Messages are written with the append-style encoders of package wire and
// constant JSON fragments; encoding/json is not used outside tests. Params
// and Headers are meant to be called once per call template (per run), so
// they may allocate; Cancel and Check are on the hot path and do not.
package profile
