// Package nativefuzz holds examples of rpcfuzz's native Go fuzzing against
// real JSON-RPC 2.0 servers built in-process, with no sockets and no child
// processes: go-ethereum's rpc.Server as an http.Handler (FuzzGeth),
// creachadair/jrpc2 over an in-memory channel (FuzzJRPC2) and mark3labs/mcp-go's
// Streamable HTTP handler in an MCP session (FuzzMCPGo).
//
// Each fuzz test is what the author of such a server would put next to it:
// the server, the rpcfuzz.Target that reaches it and the Options naming its
// methods, its protocol and the deviations from JSON-RPC 2.0 it is known for
// (Options.Ignore, each rule with the spec section it breaks and what the
// server does; the black-box findings behind them are in
// ../testdata/fuzz-baselines). Plain go test replays the seeds as regression
// tests; ../../.ci/interop-native-fuzz fuzzes each target for a bounded time.
//
// The package has no non-test code but this constant.
package nativefuzz

import "time"

// fuzzTimeout is each fuzz test's wait for a reply before an input is a
// hang. rpcfuzz's default, a second, is too short here: go-ethereum answers
// a batch of thousands of elements (a 60 KiB message) in 0.1 to 0.2 s, up
// to 0.8 s under -fuzz's coverage instrumentation with both cores of the
// machine busy, and once took over a second there. Go's own limit per input
// is 10 s.
const fuzzTimeout = 5 * time.Second
