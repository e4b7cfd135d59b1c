package nativefuzz

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rpcload/rpcload/rpcfuzz"
)

// newMCPServer returns an mcp-go server with two tools: echo (returns its
// arguments as JSON text) and add ({a, b} -> the sum as text).
func newMCPServer() *server.MCPServer {
	s := server.NewMCPServer("nativefuzz-mcpgo", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns its arguments as JSON text.")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.RawArguments
			if len(args) == 0 {
				b, err := json.Marshal(req.Params.Arguments)
				if err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				args = b
			}
			return mcp.NewToolResultText(string(args)), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Returns a+b as text."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := req.RequireFloat("a")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			b, err := req.RequireFloat("b")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(strconv.FormatFloat(a+b, 'f', -1, 64)), nil
		})
	return s
}

// mcpVersion is the MCP revision of the session the fuzz inputs are sent
// in: the latest one with sessions, which the mcp profile's seeds speak.
const mcpVersion = mcp.ProtocolVersion20251125

// newMCPGoHandler returns mcp-go's Streamable HTTP handler inside one
// initialized MCP session, as a client sees it after the handshake.
//
// Without a session, mcp-go refuses every request but initialize with 404
// "Invalid session ID" (text/plain), which rpcfuzz.Handler takes for a
// refusal at the HTTP level and does not judge: the fuzzer would reach
// almost nothing. So the handshake is done here, and every POST of the
// fuzzer carries the session's Mcp-Session-Id and Mcp-Protocol-Version
// headers. (An initialize in a fuzz input starts a session of its own, which
// the later messages of the input do not use.)
func newMCPGoHandler(tb testing.TB) http.Handler {
	tb.Helper()
	h := server.NewStreamableHTTPServer(newMCPServer())
	tb.Cleanup(func() { h.CloseSessions(context.Background()) })
	post := func(body string, header http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header[k] = v
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcpVersion+
		`","capabilities":{},"clientInfo":{"name":"nativefuzz","version":"1.0.0"}}}`, nil)
	sid := w.Header().Get(server.HeaderKeySessionID)
	if w.Code != http.StatusOK || sid == "" {
		tb.Fatalf("initialize: HTTP %d, Mcp-Session-Id %q: %s", w.Code, sid, w.Body)
	}
	session := http.Header{server.HeaderKeySessionID: {sid}, mcp.HeaderProtocolVersion: {mcpVersion}}
	if w := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); w.Code != http.StatusAccepted {
		tb.Fatalf("notifications/initialized: HTTP %d: %s", w.Code, w.Body)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range session {
			r.Header[k] = v
		}
		h.ServeHTTP(w, r)
	})
}

// mcpGoOptions are FuzzMCPGo's options: the MCP profile's seeds (handshakes,
// tools/list, tools/call, cancellation), calls of the server's own tools,
// and the deviations of mcp-go v1.2.1 found by black-box fuzzing
// (../testdata/fuzz-baselines/mcpgo-http.txt).
var mcpGoOptions = rpcfuzz.Options{
	Profile: "mcp",
	Timeout: fuzzTimeout,
	Methods: []string{"tools/call", "tools/list", "ping"},
	Params: map[string]json.RawMessage{
		"tools/call": json.RawMessage(`{"type":"object","required":["name","arguments"],"properties":{` +
			`"name":{"enum":["echo","add"]},` +
			`"arguments":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}}`),
	},
	Seeds: [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`),
		[]byte(`{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo","arguments":{"x":[1,{"y":null}]}}}`),
	},
	Ignore: []string{
		// JSON-RPC 2.0 §5.1 (-32600 for JSON that is not a valid Request
		// object): mcp-go answers valid JSON that is no request ([] - MCP
		// has no batches -, {"method":0}, a jsonrpc that is not a string)
		// with -32700; and (§5, §5.1) {"id":false}, an id but no method,
		// is taken for a client's response and answered 202 with no body
		// instead of -32600 with id null.
		"wrong_error_code",
		// JSON-RPC 2.0 §4 (an id MUST be a String, Number or Null) and §5:
		// mcp-go takes an array, object or boolean as the id, runs the
		// request and echoes that id in its response.
		"invalid_envelope",
		// JSON-RPC 2.0 §4.1 (the Server MUST NOT reply to a Notification):
		// mcp-go answers a notification it cannot parse (method "" with
		// params [], or params that do not fit) with -32700 "Failed to
		// parse notification", id null.
		"reply_to_notification",
		// JSON-RPC 2.0 §5 and §5.1: {"id":0} (an id but no method) is
		// taken for a client's response and answered 202 with an empty
		// body, where -32600 is due.
		"no_result_or_error",
	},
}

// FuzzMCPGo fuzzes mcp-go's Streamable HTTP server with the MCP profile.
func FuzzMCPGo(f *testing.F) {
	rpcfuzz.Fuzz(f, rpcfuzz.Handler(newMCPGoHandler(f)), mcpGoOptions)
}
