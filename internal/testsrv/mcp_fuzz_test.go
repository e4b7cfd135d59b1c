package testsrv

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// discardRW is a connection that reads nothing and swallows writes.
type discardRW struct{}

func (discardRW) Read([]byte) (int, error)    { return 0, io.EOF }
func (discardRW) Write(p []byte) (int, error) { return len(p), nil }
func (discardRW) Close() error                { return nil }

// FuzzProtoFrames feeds the lines of the input, in order, to one MCP
// connection of each era and to one LSP connection: whatever they hold,
// the server must not panic, and every frame must be answered with valid
// JSON or not at all. The seeds run as a plain test.
func FuzzProtoFrames(f *testing.F) {
	seeds := []string{
		legacyInit("2025-11-25") + "\n" + legacyInitialized + "\n" + legacyReq("2", "tools/call", `"name":"add","arguments":{"a":1e999,"b":1}`),
		modernReq("1", "tools/call", `"name":"echo","arguments":{"a":[[[[{}]]]]}`) + "\n" + modernReq("2", "tools/call", `"name":"sleep","arguments":{"ms":1e400}`),
		modernReq("1", "tools/list", `"cursor":"x"`) + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1.5,"rootUri":7,"capabilities":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{"workspace":{"configuration":"yes"}}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"u","text":"func (\nfunc é(x)\nfunc 𝔘 ()"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"u"},"position":{"line":1,"character":99999999}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"u"},"position":{"line":2,"character":6}}}` + "\n" +
			`{"jsonrpc":"2.0","id":4,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"u"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"u"},"position":{"line":1e30,"character":-1}}}`,
		"\xff\xfe", "[]", `{"jsonrpc":"2.0","id":1,"result":1}`, `{"id":1,"method":"ping"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	cfgs := []Config{{Profile: ProfileMCP}, {Profile: ProfileMCP, MCPEra: MCPModern, ServerMessages: true}, {Profile: ProfileMCP, MCPEra: MCPLegacy}, {Profile: ProfileLSP}}
	servers := make([]*Server, len(cfgs))
	for i, cfg := range cfgs {
		s, err := New(cfg)
		if err != nil {
			f.Fatal(err)
		}
		defer s.Close()
		servers[i] = s
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range servers {
			c := s.newConn(discardRW{}, nil, FramingNewline, nil)
			for _, line := range bytes.Split(data, []byte("\n")) {
				c.proto.frame(line)
			}
			for _, line := range bytes.Split(c.local, []byte("\n")) {
				if len(line) > 0 && !json.Valid(line) {
					t.Fatalf("invalid reply %q", line)
				}
			}
			c.proto.stop()
		}
	})
}
