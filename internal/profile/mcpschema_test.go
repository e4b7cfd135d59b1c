package profile

import (
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

// TestMCPSchemas validates every message the mcp profile writes against the
// MCP schema of its era.
func TestMCPSchemas(t *testing.T) {
	p := mustNew(t, MCP, Options{ClientName: "rpcload", ClientVersion: "1.0.0"})
	request := func(era Era, method, params string, f wire.IDFormat) []byte {
		var in []byte
		if params != "" {
			in = []byte(params)
		}
		out, err := p.Params(era, method, in)
		if err != nil {
			t.Fatalf("Params(%s, %s): %v", method, params, err)
		}
		return wire.AppendRequest(nil, 42, f, wire.AppendString(nil, method), out)
	}
	probe, _ := p.Probe()
	legacy := p.Handshake(EraLegacy)
	ping := scan(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)
	unknown := scan(`{"jsonrpc":"2.0","id":5,"method":"roots/list"}`)
	tests := []struct {
		name, schema, def string
		msg               []byte
	}{
		{"probe", schemaModern, "DiscoverRequest", probe.Append(nil, 1, wire.IDInt)},
		{"probe, string id", schemaModern, "DiscoverRequest", probe.Append(nil, 1, wire.IDQuoted)},
		{"tools/call", schemaModern, "CallToolRequest", request(EraModern, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, wire.IDInt)},
		{"tools/call with _meta", schemaModern, "CallToolRequest", request(EraModern, "tools/call", `{"name":"echo","_meta":{"progressToken":"p"}}`, wire.IDQuoted)},
		{"tools/list, no params", schemaModern, "ListToolsRequest", request(EraModern, "tools/list", ``, wire.IDInt)},
		{"tools/list, cursor", schemaModern, "ListToolsRequest", request(EraModern, "tools/list", `{"cursor":"c1"}`, wire.IDInt)},
		{"resources/read", schemaModern, "ReadResourceRequest", request(EraModern, "resources/read", `{"uri":"file:///a"}`, wire.IDInt)},
		{"prompts/get", schemaModern, "GetPromptRequest", request(EraModern, "prompts/get", `{"name":"greet","arguments":{"who":"x"}}`, wire.IDInt)},
		{"cancel", schemaModern, "CancelledNotification", p.Cancel(nil, []byte("42"))},
		{"cancel, string id", schemaModern, "CancelledNotification", p.Cancel(nil, []byte(`"42"`))},
		{"unknown server request", schemaModern, "JSONRPCErrorResponse", p.AnswerServerRequest(nil, unknown)},
		{"discover result fixture", schemaModern, "DiscoverResultResponse", []byte(discoverResult)},

		{"initialize", schemaLegacy, "InitializeRequest", legacy[0].Append(nil, 1, wire.IDInt)},
		{"initialize, string id", schemaLegacy, "InitializeRequest", legacy[0].Append(nil, 1, wire.IDQuoted)},
		{"initialized", schemaLegacy, "InitializedNotification", legacy[1].Append(nil, 0, wire.IDInt)},
		{"legacy tools/call", schemaLegacy, "CallToolRequest", request(EraLegacy, "tools/call", `{"name":"echo","arguments":{}}`, wire.IDInt)},
		{"legacy tools/list", schemaLegacy, "ListToolsRequest", request(EraLegacy, "tools/list", ``, wire.IDInt)},
		{"legacy cancel", schemaLegacy, "CancelledNotification", p.Cancel(nil, []byte("42"))},
		{"ping answer", schemaLegacy, "JSONRPCResultResponse", p.AnswerServerRequest(nil, ping)},
		{"legacy unknown server request", schemaLegacy, "JSONRPCErrorResponse", p.AnswerServerRequest(nil, unknown)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			validate(t, tc.schema, tc.def, tc.msg)
		})
	}

	// The values, beyond the schema's types.
	for _, msg := range [][]byte{tests[0].msg, tests[2].msg, tests[4].msg} {
		v := decode(t, msg)
		meta := path(v, "params", "_meta")
		if pv := path(meta, metaProtocolVersion); pv != "2026-07-28" {
			t.Errorf("%s: protocolVersion %v", msg, pv)
		}
		if caps, ok := path(meta, metaClientCapabilities).(map[string]any); !ok || len(caps) != 0 {
			t.Errorf("%s: clientCapabilities %v", msg, caps)
		}
		if n, ver := path(meta, metaClientInfo, "name"), path(meta, metaClientInfo, "version"); n != "rpcload" || ver != "1.0.0" {
			t.Errorf("%s: clientInfo %v %v", msg, n, ver)
		}
	}
	init := decode(t, tests[12].msg)
	if pv := path(init, "params", "protocolVersion"); pv != "2025-11-25" {
		t.Errorf("initialize protocolVersion %v", pv)
	}
	if n, ver := path(init, "params", "clientInfo", "name"), path(init, "params", "clientInfo", "version"); n != "rpcload" || ver != "1.0.0" {
		t.Errorf("initialize clientInfo %v %v", n, ver)
	}
	if caps, ok := path(init, "params", "capabilities").(map[string]any); !ok || len(caps) != 0 {
		t.Errorf("initialize capabilities %v", caps)
	}
	cancel := decode(t, tests[8].msg)
	if path(cancel, "params", "requestId") != 42.0 || path(cancel, "params", "reason") != "timeout" {
		t.Errorf("cancel params %v", cancel["params"])
	}
}

// TestMCPSchemaRejectsOldShapes makes sure the schema test would notice a
// modern request without _meta, or a legacy initialize without clientInfo.
func TestMCPSchemaRejectsOldShapes(t *testing.T) {
	for _, tc := range []struct{ schema, def, msg string }{
		{schemaModern, "CallToolRequest", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`},
		{schemaModern, "DiscoverRequest", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{schemaLegacy, "InitializeRequest", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`},
	} {
		ft := &fakeT{TB: t}
		validate(ft, tc.schema, tc.def, []byte(tc.msg))
		if !ft.failed {
			t.Errorf("%s accepted as %s", tc.msg, tc.def)
		}
	}
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
