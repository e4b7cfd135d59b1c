package testsrv

// MCP mode, the part that does not depend on the transport: options,
// counters, _meta validation, and the methods and tools. mcpstream.go serves
// it on byte streams, mcphttp.go on Streamable HTTP.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// MCPEra says which MCP revisions the server speaks.
type MCPEra string

// The eras. A dual server decides per stream connection (or per HTTP
// request and session) by what the client sends first: initialize (or an
// Mcp-Session-Id) means legacy, a request with params._meta
// io.modelcontextprotocol/protocolVersion or server/discover means modern.
const (
	MCPDual   MCPEra = "dual"   // both (also ""): the default
	MCPModern MCPEra = "modern" // 2026-07-28 only: no handshake, _meta on every request
	MCPLegacy MCPEra = "legacy" // 2025-11-25, 2025-06-18 and 2025-03-26: initialize first
)

// ParseMCPEra reads an --mcp-era value; "" is MCPDual. Errors wrap ErrConfig.
func ParseMCPEra(s string) (MCPEra, error) {
	switch e := MCPEra(s); e {
	case "", MCPDual:
		return MCPDual, nil
	case MCPModern, MCPLegacy:
		return e, nil
	}
	return "", fmt.Errorf("%w: unknown MCP era %q (valid: dual, modern, legacy)", ErrConfig, s)
}

// MCPResponse says how /mcp answers a request.
type MCPResponse string

// The response modes of Streamable HTTP.
const (
	// MCPResponseAuto (also "") answers tools/call as MCPResponseSSE and
	// everything else as MCPResponseJSON: tool calls are what real servers
	// stream (progress, logs), and the rest stays cheap to read.
	MCPResponseAuto MCPResponse = "auto"
	// MCPResponseJSON answers with Content-Type application/json and the
	// response object as the body.
	MCPResponseJSON MCPResponse = "json"
	// MCPResponseSSE answers with Content-Type text/event-stream: a
	// ": keep-alive" comment, one notifications/message event, in a legacy
	// session with ServerMessages the server's ping request on the first
	// tools/call, then the response event; then the stream ends.
	MCPResponseSSE MCPResponse = "sse"
)

// ParseMCPResponse reads an --mcp-response value; "" is MCPResponseAuto.
// Errors wrap ErrConfig.
func ParseMCPResponse(s string) (MCPResponse, error) {
	switch r := MCPResponse(s); r {
	case "", MCPResponseAuto:
		return MCPResponseAuto, nil
	case MCPResponseJSON, MCPResponseSSE:
		return r, nil
	}
	return "", fmt.Errorf("%w: unknown MCP response mode %q (valid: auto, json, sse)", ErrConfig, s)
}

// MCPPath is where the HTTP listener serves MCP Streamable HTTP in
// ProfileMCP; every other path keeps serving plain JSON-RPC.
const MCPPath = "/mcp"

// The MCP revisions the server speaks.
const (
	MCPVersionModern = "2026-07-28"
	MCPVersionLegacy = "2025-11-25" // the newest legacy revision, offered when a client asks for an unknown one
)

// mcpLegacyVersions are the legacy revisions initialize accepts (answered
// with the one requested). 2024-11-05 is left out: its HTTP transport is
// the older HTTP+SSE one, which this server does not serve.
var mcpLegacyVersions = []string{MCPVersionLegacy, "2025-06-18", "2025-03-26"}

// The method names counted by name in MCPStats; others count as "other".
var (
	mcpMethods       = []string{"initialize", "ping", "server/discover", "tools/list", "tools/call"}
	mcpNotifications = []string{"notifications/initialized", "notifications/cancelled"}
)

// MCPStats are exact counts of what the MCP server saw and did, for tests to
// compare with what a client reports. Maps hold non-zero entries only.
type MCPStats struct {
	Requests      map[string]uint64 // requests answered (result or error), by method; unknown methods as "other"
	Errors        map[int64]uint64  // error replies by code (HTTP refusals with a JSON-RPC body included)
	Notifications map[string]uint64 // notifications received, by method; unknown ones as "other"

	ModernConns uint64 // stream connections that settled on 2026-07-28
	LegacyConns uint64 // stream connections that completed initialize
	Handshakes  uint64 // initialize requests answered with a result (streams and HTTP)
	Sessions    uint64 // Mcp-Session-Id values handed out over HTTP

	Cancelled         uint64 // notifications/cancelled received
	CancelledInFlight uint64 // of those, the ones that stopped a running request (which then got no reply)
	Aborted           uint64 // HTTP requests whose client closed the stream before the reply (Streamable HTTP's cancellation)
	HeaderMismatches  uint64 // HTTP requests refused with -32020 (headers missing or not matching the body)

	ServerRequests       uint64 // requests the server sent the client (ping, with ServerMessages)
	ServerNotifications  uint64 // notifications the server sent the client (notifications/message)
	ServerRequestAnswers uint64 // client replies whose id matched a server request (results and errors)
	ServerRequestErrors  uint64 // of those, error replies
	UnknownReplies       uint64 // client replies whose id matched no outstanding server request
}

// MCPStats returns a snapshot of the MCP counters.
func (s *Server) MCPStats() MCPStats {
	s.proto.mu.Lock()
	defer s.proto.mu.Unlock()
	st := s.proto.mcp
	st.Requests = counts(st.Requests).clone()
	st.Notifications = counts(st.Notifications).clone()
	st.Errors = cloneCodes(st.Errors)
	return st
}

func cloneCodes(m map[int64]uint64) map[int64]uint64 {
	out := make(map[int64]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// countMCPReply counts one reply: under method when it answers a request
// ("" for a frame that was none), and its error code.
func (s *Server) countMCPReply(method string, e *rpcError) {
	s.proto.updateMCP(func(st *MCPStats) {
		if method != "" {
			st.Requests[known(method, mcpMethods)]++
		}
		if e != nil {
			st.Errors[e.code]++
		}
	})
}

// mcpEraState is the era a connection, session or request speaks.
type mcpEraState uint8

const (
	eraUnknown mcpEraState = iota
	eraModern
	eraLegacy
)

// speaks reports whether the configured era allows e.
func (s *Server) speaks(e mcpEraState) bool {
	switch s.cfg.MCPEra {
	case MCPModern:
		return e == eraModern
	case MCPLegacy:
		return e == eraLegacy
	}
	return true
}

// The reserved _meta keys of a modern request.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
)

// objectOf decodes raw as a JSON object; ok is false for anything else.
func objectOf(raw []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || raw[wire.SkipSpace(raw, 0)] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// stringOf decodes raw as a JSON string.
func stringOf(raw []byte) (string, bool) {
	var v string
	if len(raw) == 0 || raw[wire.SkipSpace(raw, 0)] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

// metaVersionOf returns params._meta's protocolVersion when it is a string:
// how a dual server recognises a modern request.
func metaVersionOf(params []byte) (string, bool) {
	p, ok := objectOf(params)
	if !ok {
		return "", false
	}
	meta, ok := objectOf(p["_meta"])
	if !ok {
		return "", false
	}
	return stringOf(meta[metaVersion])
}

// checkModernMeta validates params._meta of a modern request (the required
// RequestMetaObject members of schema-2026-07-28.json) and returns the
// version it asks for, whether or not the server supports it. A missing or
// malformed required member is -32602.
func checkModernMeta(params []byte) (string, *rpcError) {
	if params == nil {
		return "", errf(wire.CodeInvalidParams, msgInvalidParams, "missing params._meta (2026-07-28 requests carry %s and %s)", metaVersion, metaCapabilities)
	}
	p, ok := objectOf(params)
	if !ok {
		return "", errf(wire.CodeInvalidParams, msgInvalidParams, "params must be an object")
	}
	raw, ok := p["_meta"]
	if !ok {
		return "", errf(wire.CodeInvalidParams, msgInvalidParams, "missing params._meta")
	}
	meta, ok := objectOf(raw)
	if !ok {
		return "", errf(wire.CodeInvalidParams, msgInvalidParams, "params._meta must be an object")
	}
	v, ok := stringOf(meta[metaVersion])
	if !ok {
		return "", errf(wire.CodeInvalidParams, msgInvalidParams, "params._meta needs %s, a string", metaVersion)
	}
	if _, ok := objectOf(meta[metaCapabilities]); !ok {
		return v, errf(wire.CodeInvalidParams, msgInvalidParams, "params._meta needs %s, an object", metaCapabilities)
	}
	if ci, present := meta[metaClientInfo]; present && !isImplementation(ci) {
		return v, errf(wire.CodeInvalidParams, msgInvalidParams, "params._meta %s must be an object with name and version strings", metaClientInfo)
	}
	return v, nil
}

// isImplementation reports whether raw is an Implementation object (name
// and version are the schema's required members).
func isImplementation(raw []byte) bool {
	m, ok := objectOf(raw)
	if !ok {
		return false
	}
	_, okName := stringOf(m["name"])
	_, okVersion := stringOf(m["version"])
	return okName && okVersion
}

// unsupportedVersion is the UnsupportedProtocolVersionError for v.
func unsupportedVersion(v string) *rpcError {
	data, _ := json.Marshal(struct {
		Requested string   `json:"requested"`
		Supported []string `json:"supported"`
	}{v, []string{MCPVersionModern}})
	return &rpcError{code: codeUnsupportedVersion, msg: "Unsupported protocol version", data: data}
}

// serverInfo is the Implementation of this server.
var serverInfo = json.RawMessage(`{"name":"rpcload-testsrv","version":"1.0.0"}`)

// mcpInitialize validates legacy initialize params and returns the result
// and the revision the session speaks: the requested one when it is a
// legacy revision the server speaks, else MCPVersionLegacy (the spec lets
// the server offer another version; the client then decides).
func mcpInitialize(params []byte) ([]byte, string, *rpcError) {
	p, ok := objectOf(params)
	if !ok {
		return nil, "", errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs params, an object")
	}
	want, ok := stringOf(p["protocolVersion"])
	if !ok {
		return nil, "", errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs protocolVersion, a string")
	}
	if _, ok := objectOf(p["capabilities"]); !ok {
		return nil, "", errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs capabilities, an object")
	}
	if !isImplementation(p["clientInfo"]) {
		return nil, "", errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs clientInfo with name and version strings")
	}
	version := MCPVersionLegacy
	for _, v := range mcpLegacyVersions {
		if v == want {
			version = v
		}
	}
	// logging is declared because the server may send notifications/message.
	result, _ := json.Marshal(struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
	}{version, json.RawMessage(`{"tools":{},"logging":{}}`), serverInfo})
	return result, version, nil
}

// discoverResult is the DiscoverResult of a modern server/discover.
var discoverResult = []byte(`{"supportedVersions":["` + MCPVersionModern + `"],"capabilities":{"tools":{},"logging":{}},` +
	`"cacheScope":"public","ttlMs":0,"_meta":{"` + metaServerInfo + `":` + string(serverInfo) + `},"resultType":"complete"}`)

// mcpTools is the tools array of tools/list.
const mcpTools = `[` +
	`{"name":"echo","description":"Returns its arguments as JSON text.","inputSchema":{"type":"object"}},` +
	`{"name":"add","description":"Returns a+b as text.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},` +
	`{"name":"sleep","description":"Answers after ms milliseconds (0..600000); cancellable.","inputSchema":{"type":"object","properties":{"ms":{"type":"number","minimum":0,"maximum":600000}},"required":["ms"]}}` +
	`]`

// mcpCall computes the answer to method in era e (eraModern or eraLegacy;
// the caller has validated the era and the handshake): a result or an
// error, and for sleep how long to wait before sending it. initialize and
// server/discover are answered by the transports, which own the era.
func mcpCall(e mcpEraState, method string, params []byte) ([]byte, *rpcError, time.Duration) {
	modern := e == eraModern
	var p map[string]json.RawMessage
	if params != nil {
		var ok bool
		if p, ok = objectOf(params); !ok {
			return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "params must be an object"), 0
		}
	}
	switch method {
	case "ping":
		return complete(modern, []byte("{}")), nil, 0
	case "tools/list":
		if c, ok := p["cursor"]; ok {
			return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "unknown cursor %s: the list has one page", c), 0
		}
		if modern {
			return []byte(`{"tools":` + mcpTools + `,"cacheScope":"public","ttlMs":0,"resultType":"complete"}`), nil, 0
		}
		return []byte(`{"tools":` + mcpTools + `}`), nil, 0
	case "tools/call":
		return callTool(modern, p)
	}
	return nil, &rpcError{code: wire.CodeMethodNotFound, msg: msgMethodNotFound, data: wire.AppendString(nil, method)}, 0
}

// complete adds "resultType":"complete" to a result object in the modern
// era (every 2026-07-28 result carries it).
func complete(modern bool, obj []byte) []byte {
	if !modern {
		return obj
	}
	out := append([]byte(nil), obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	return append(out, `"resultType":"complete"}`...)
}

// callTool runs a tool. An unknown tool is -32602 (the spec lists unknown
// tools among protocol errors); bad arguments are a result with isError
// (the spec wants tool input errors visible to the model).
func callTool(modern bool, p map[string]json.RawMessage) ([]byte, *rpcError, time.Duration) {
	name, ok := stringOf(p["name"])
	if !ok {
		return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "tools/call needs name, a string"), 0
	}
	args := map[string]json.RawMessage{}
	if raw, present := p["arguments"]; present {
		if args, ok = objectOf(raw); !ok {
			return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "tools/call arguments must be an object"), 0
		}
	}
	switch name {
	case "echo":
		var buf bytes.Buffer
		if raw, present := p["arguments"]; present {
			_ = json.Compact(&buf, raw) // valid: objectOf decoded it
		} else {
			buf.WriteString("{}")
		}
		return toolText(modern, buf.String(), false), nil, 0
	case "add":
		a, okA := numberArg(args["a"])
		b, okB := numberArg(args["b"])
		if !okA || !okB || len(args) != 2 {
			return toolText(modern, "add takes exactly a and b, both numbers", true), nil, 0
		}
		sum, ok := addNumbers(a, b)
		if !ok {
			return toolText(modern, "a+b is out of range", true), nil, 0
		}
		return toolText(modern, sum, false), nil, 0
	case "sleep":
		ms, ok := numberArg(args["ms"])
		f, err := strconv.ParseFloat(ms, 64)
		if !ok || len(args) != 1 || err != nil || f < 0 || f > maxSleepMS {
			return toolText(modern, "sleep takes ms, a number between 0 and 600000", true), nil, 0
		}
		return toolText(modern, "slept "+ms+" ms", false), nil, time.Duration(f * float64(time.Millisecond))
	}
	return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "unknown tool %q", name), 0
}

// numberArg returns the literal of a JSON number argument.
func numberArg(raw []byte) (string, bool) {
	t := bytes.TrimSpace(raw)
	if !wire.IsNumber(t) {
		return "", false
	}
	return string(t), true
}

// addNumbers adds two JSON number literals: exactly for integers that fit
// int64, as float64 otherwise (printed like encoding/json).
func addNumbers(a, b string) (string, bool) {
	fa, ia, aInt, okA := number([]byte(a))
	fb, ib, bInt, okB := number([]byte(b))
	if !okA || !okB {
		return "", false // a literal beyond float64
	}
	if aInt && bInt {
		if r, ok := intOp(ia, ib, false); ok {
			return strconv.FormatInt(r, 10), true
		}
	}
	if r := fa + fb; !math.IsInf(r, 0) {
		return string(wire.AppendFloat(nil, r, 64)), true
	}
	return "", false
}

// toolText is a CallToolResult with one text block.
func toolText(modern bool, text string, isError bool) []byte {
	out := append([]byte(`{"content":[{"type":"text","text":`), wire.AppendString(nil, text)...)
	out = append(out, "}]"...)
	if isError {
		out = append(out, `,"isError":true`...)
	}
	return complete(modern, append(out, '}'))
}

// mcpLogNote is the notifications/message the server sends with
// ServerMessages and on SSE streams. 2026-07-28 lets a server log to a
// request only when its _meta sets io.modelcontextprotocol/logLevel; this
// server logs regardless, on purpose, so that a client's handling of
// unsolicited notifications is exercised in both eras (rpcload sets no
// level).
var mcpLogNote = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"rpcload-testsrv","data":"hello from the reference server"}}`)

// mcpPing appends the server's ping request with integer id n.
func mcpPing(n uint64) []byte {
	return wire.AppendRequest(nil, n, wire.IDInt, []byte(`"ping"`), nil)
}
