package testsrv

import (
	"bytes"
	_ "embed" // the OpenRPC document
	"encoding/json"
)

// openRPCSource describes the methods of the plain mode as an OpenRPC
// document, the answer to rpc.discover (so scenario discovery can be tried
// against the reference server: rpcload scenario from-openrpc --discover).
//
//go:embed openrpc.json
var openRPCSource []byte

// openRPCDoc is openRPCSource compacted once: a result must fit on one line
// of newline framing.
var openRPCDoc = func() []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, openRPCSource); err != nil {
		panic("testsrv: openrpc.json: " + err.Error()) // a build-time file: a test catches it
	}
	return b.Bytes()
}()
