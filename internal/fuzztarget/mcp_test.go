package fuzztarget

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// toolCall is a tools/call request of tool with arguments (raw JSON).
func toolCall(id, tool, arguments string) string {
	return req(id, `"tools/call"`, `{"name":"`+tool+`","arguments":`+arguments+`}`)
}

// jsonString encodes s as encoding/json does without HTML escaping.
func jsonString(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// toolResult is a CallToolResult of one text block.
func toolResult(text string, isError bool) string {
	s := `{"content":[{"type":"text","text":` + jsonString(text) + `}]`
	if isError {
		s += `,"isError":true`
	}
	return s + "}"
}

// searchResult is search's result for query with n hits.
func searchResult(query string, n int) string {
	hits := make([]string, n)
	for i := range hits {
		hits[i] = jsonString(query + " #" + strconv.Itoa(i+1))
	}
	structured := `{"hits":[` + strings.Join(hits, ",") + `]}`
	return `{"content":[{"type":"text","text":` + jsonString(structured) + `}],"structuredContent":` + structured + "}"
}

// completed is a result object of a modern request.
func completed(obj string) string {
	if obj == "{}" {
		return `{"resultType":"complete"}`
	}
	return strings.TrimSuffix(obj, "}") + `,"resultType":"complete"}`
}

func initParams(version string) string {
	return `{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`
}

func initResult(version string) string {
	return `{"protocolVersion":"` + version + `","capabilities":{"tools":{}},"serverInfo":{"name":"fuzztarget","version":"1"}}`
}

const (
	initUsage     = `initialize needs params {\"protocolVersion\": string, \"capabilities\": object, \"clientInfo\": {\"name\", \"version\"}}`
	toolsUsage    = `tools/call needs params {\"name\": string, \"arguments\": object}`
	discoverReply = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"cacheScope":"public","ttlMs":0,` +
		`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fuzztarget","version":"1"}},"resultType":"complete"}`
)

// unsupported is the -32022 reply to a request asking for version (raw).
func unsupported(id, version string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":` +
		version + `,"supported":["2026-07-28"]}}}`
}

// mcpCase is one MCP exchange: a frame and its reply.
type mcpCase struct{ name, in, want string }

// mcpCases are the MCP answers, for TestMCPAnswers and the conformance
// checks of TestMCPConformance.
func mcpCases() []mcpCase {
	tools := `{"tools":` + string(toolsDoc) + "}"
	modernTools := `{"tools":` + string(toolsDoc) + `,"cacheScope":"public","ttlMs":0}`
	search := func(args string) string { return toolCall("1", "search", args) }
	sum := func(args string) string { return toolCall("1", "sum", args) }
	long := strings.Repeat("é", 200)
	return []mcpCase{
		{"initialize", req("1", `"initialize"`, initParams("2025-11-25")), ok("1", initResult("2025-11-25"))},
		{"initialize 2025-06-18", req("1", `"initialize"`, initParams("2025-06-18")), ok("1", initResult("2025-06-18"))},
		{"initialize 2025-03-26", req("1", `"initialize"`, initParams("2025-03-26")), ok("1", initResult("2025-03-26"))},
		{"initialize 2024-11-05", req("1", `"initialize"`, initParams("2024-11-05")), ok("1", initResult("2024-11-05"))},
		{"initialize 2026-07-28", req("1", `"initialize"`, initParams("2026-07-28")), ok("1", initResult("2025-11-25"))},
		{"initialize unknown version", req(`"i"`, `"initialize"`, initParams("1999-01-01")), ok(`"i"`, initResult("2025-11-25"))},
		{"initialize, modern", req("1", `"initialize"`, strings.TrimSuffix(initParams("2025-11-25"), "}")+","+modernMeta+"}"),
			ok("1", completed(initResult("2025-11-25")))},
		{"initialize without params", req("1", `"initialize"`, ""), badParams("1", `"`+initUsage+`"`)},
		{"initialize by position", req("1", `"initialize"`, `["2025-11-25"]`), badParams("1", `"MCP params must be an object"`)},
		{"initialize without protocolVersion", req("1", `"initialize"`, `{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`),
			badParams("1", `"`+initUsage+`; protocolVersion is missing or not a string"`)},
		{"initialize, protocolVersion a number", req("1", `"initialize"`, `{"protocolVersion":20251125,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`),
			badParams("1", `"`+initUsage+`; protocolVersion is missing or not a string"`)},
		{"initialize without capabilities", req("1", `"initialize"`, `{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}`),
			badParams("1", `"`+initUsage+`; capabilities is missing or not an object"`)},
		{"initialize, clientInfo without version", req("1", `"initialize"`, `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c"}}`),
			badParams("1", `"`+initUsage+`; clientInfo is missing or not an Implementation"`)},
		{"initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{"initialized with params", `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, ""},
		{"initialized as a request", req("1", `"notifications/initialized"`, ""), noMethod("1", `"notifications/initialized"`)},
		{"cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, ""},

		{"ping", req("1", `"ping"`, ""), ok("1", "{}")},
		{"ping {}", req("1", `"ping"`, "{}"), ok("1", "{}")},
		{"ping with a progress token", req("1", `"ping"`, `{"_meta":{"progressToken":1}}`), ok("1", "{}")},
		{"ping, modern", req("1", `"ping"`, "{"+modernMeta+"}"), ok("1", completed("{}"))},
		{"ping []", req("1", `"ping"`, "[]"), badParams("1", `"MCP params must be an object"`)},
		{"ping, _meta no object", req("1", `"ping"`, `{"_meta":1}`), badParams("1", `"params._meta must be an object"`)},
		{"ping, unsupported version", req("1", `"ping"`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}`),
			unsupported("1", `"2099-01-01"`)},
		{"ping, modern without capabilities", req("1", `"ping"`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`),
			badParams("1", `"params._meta needs io.modelcontextprotocol/clientCapabilities, an object"`)},
		{"ping, modern with a bad clientInfo", req("1", `"ping"`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"me"}}`),
			badParams("1", `"params._meta io.modelcontextprotocol/clientInfo must be an object with name and version strings"`)},

		{"server/discover", req("1", `"server/discover"`, "{"+modernMeta+"}"), ok("1", discoverReply)},
		{"server/discover without params", req("1", `"server/discover"`, ""), ok("1", discoverReply)},

		{"tools/list", req("2", `"tools/list"`, ""), ok("2", tools)},
		{"tools/list {}", req("2", `"tools/list"`, "{}"), ok("2", tools)},
		{"tools/list, modern", req("2", `"tools/list"`, "{"+modernMeta+"}"), ok("2", completed(modernTools))},
		{"tools/list, a cursor", req("2", `"tools/list"`, `{"cursor":"page-2"}`), badParams("2", `"unknown cursor \"page-2\": the list has one page"`)},
		{"tools/list, an old version", req("2", `"tools/list"`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`),
			unsupported("2", `"2025-11-25"`)},

		{"search", search(`{"query":"go"}`), ok("1", searchResult("go", 3))},
		{"search, limit 2", search(`{"query":"go","limit":2}`), ok("1", searchResult("go", 2))},
		{"search, limit 1.0", search(`{"limit":1.0,"query":"go"}`), ok("1", searchResult("go", 1))},
		{"search, limit 100", search(`{"query":"go","limit":100}`), ok("1", searchResult("go", 3))},
		{"search, escapes", search(`{"query":"a\"b\\c\n</script>\u2028"}`), ok("1", searchResult("a\"b\\c\n</script>\u2028", 3))},
		{"search, 200 characters", search(`{"query":"` + long + `"}`), ok("1", searchResult(long, 3))},
		{"search, modern", req("1", `"tools/call"`, `{`+modernMeta+`,"name":"search","arguments":{"query":"go"}}`), ok("1", completed(searchResult("go", 3)))},
		{"search, 201 characters", search(`{"query":"` + long + `é"}`), ok("1", toolResult("search: query is longer than 200 characters", true))},
		{"search, no query", search(`{"limit":1}`), ok("1", toolResult("search: query is required", true))},
		{"search, no arguments", req("1", `"tools/call"`, `{"name":"search"}`), ok("1", toolResult("search: query is required", true))},
		{"search, query a number", search(`{"query":1}`), ok("1", toolResult("search: query must be a string", true))},
		{"search, limit 0", search(`{"query":"go","limit":0}`), ok("1", toolResult("search: limit must be between 1 and 100", true))},
		{"search, limit 101", search(`{"query":"go","limit":101}`), ok("1", toolResult("search: limit must be between 1 and 100", true))},
		{"search, limit 2.5", search(`{"query":"go","limit":2.5}`), ok("1", toolResult("search: limit must be an integer", true))},
		{"search, limit a string", search(`{"query":"go","limit":"2"}`), ok("1", toolResult("search: limit must be an integer", true))},
		{"search, another argument", search(`{"query":"go","page":2}`), ok("1", toolResult(`search: unknown argument "page"`, true))},

		{"sum", sum(`{"values":[1,2,3]}`), ok("1", toolResult("6", false))},
		{"sum of none", sum(`{"values":[]}`), ok("1", toolResult("0", false))},
		{"sum of floats", sum(`{"values":[0.1,0.2]}`), ok("1", toolResult("0.30000000000000004", false))},
		{"sum, small", sum(`{"values":[1e-7]}`), ok("1", toolResult("1e-7", false))},
		{"sum past int64", sum(`{"values":[9223372036854775807,1]}`), ok("1", toolResult("9223372036854776000", false))},
		{"sum to +Inf", sum(`{"values":[1e308,1e308]}`), ok("1", toolResult("+Inf", false))},
		{"sum to -Inf", sum(`{"values":[-1e400]}`), ok("1", toolResult("-Inf", false))},
		{"sum to NaN", sum(`{"values":[1e400,-1e400]}`), ok("1", toolResult("NaN", false))},
		{"sum, no values", sum(`{}`), ok("1", toolResult("sum: values is required", true))},
		{"sum, values no array", sum(`{"values":"1,2"}`), ok("1", toolResult("sum: values must be an array of numbers", true))},
		{"sum, a string value", sum(`{"values":[1,"2"]}`), ok("1", toolResult("sum: values[1] must be a number", true))},
		{"sum, another argument", sum(`{"values":[1],"x":0}`), ok("1", toolResult(`sum: unknown argument "x"`, true))},

		{"tools/call without params", req("1", `"tools/call"`, ""), badParams("1", `"`+toolsUsage+`"`)},
		{"tools/call by position", req("1", `"tools/call"`, `["search"]`), badParams("1", `"MCP params must be an object"`)},
		{"tools/call without name", req("1", `"tools/call"`, `{"arguments":{}}`), badParams("1", `"`+toolsUsage+`; name is missing or not a string"`)},
		{"tools/call, name a number", req("1", `"tools/call"`, `{"name":1}`), badParams("1", `"`+toolsUsage+`; name is missing or not a string"`)},
		{"tools/call, arguments no object", req("1", `"tools/call"`, `{"name":"sum","arguments":[1]}`), badParams("1", `"`+toolsUsage+`; arguments is not an object"`)},
		{"tools/call, arguments null", req("1", `"tools/call"`, `{"name":"sum","arguments":null}`), badParams("1", `"`+toolsUsage+`; arguments is not an object"`)},
		{"tools/call, an unknown tool", toolCall("1", "echo", `{}`), badParams("1", `"unknown tool \"echo\""`)},
		{"tools/call, unsupported version", req("1", `"tools/call"`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":""},"name":"sum"}`),
			unsupported("1", `""`)},
	}
}

// TestMCPAnswers: the MCP methods get their documented answers, byte for
// byte, whether the bugs are planted or not (none of these triggers one).
func TestMCPAnswers(t *testing.T) {
	for _, tc := range mcpCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, bugs := range []Bug{0, AllBugs} {
				if got := run(t, bugs, tc.in); got != (outcome{reply: tc.want}) {
					t.Errorf("bugs %q:\n got %.400v\nwant %.400v", bugs, got, outcome{reply: tc.want})
				}
			}
		})
	}
}

// resultDefs names the schema definition of each MCP method's result.
var resultDefs = map[string]string{"initialize": "InitializeResult", "ping": "EmptyResult", "server/discover": "DiscoverResult",
	"tools/list": "ListToolsResult", "tools/call": "CallToolResult"}

// TestMCPConformance: every MCP reply breaks none of the mcp profile's
// rules (Check in either era, and the modern exchange rules), and fits the
// MCP schema of its request's era: the envelope, the result of its method,
// a tool's structuredContent its outputSchema. A fuzzer with --profile mcp
// then has nothing to flag on the server when no bug is planted.
func TestMCPConformance(t *testing.T) {
	p, err := profile.New(profile.MCP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[bool]*mcpSchemas{false: loadMCPSchemas(t, mcpSchemaLegacy), true: loadMCPSchemas(t, mcpSchemaModern)}
	outputs := outputSchemas(t)
	for _, tc := range mcpCases() {
		if tc.want == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			var rq, rp wire.Message
			wire.Scan([]byte(tc.in), &rq)
			wire.Scan([]byte(tc.want), &rp)
			for _, era := range []profile.Era{profile.EraLegacy, profile.EraModern} {
				if rules := p.Check(&rp, era); rules != 0 {
					t.Errorf("%s era: breaks %v", era, rules)
				}
			}
			if rules, note := profile.CheckExchange(p, &profile.Exchange{Request: &rq, Reply: &rp, Era: profile.EraModern}); rules != 0 {
				t.Errorf("breaks %v: %s", rules, note)
			}
			method, _ := wire.Unquote(nil, rq.Method)
			modern, _ := readMeta(nil, &member{val: rq.Params})
			sc := schemas[modern || string(method) == "server/discover"]
			if rp.Kind == wire.KindError {
				def := "JSONRPCErrorResponse"
				if rp.Code == codeUnsupportedVersion {
					def = "UnsupportedProtocolVersionError"
				}
				if err := sc.check(def, []byte(tc.want)); err != nil {
					t.Errorf("not a %s: %v", def, err)
				}
				return
			}
			if err := sc.check("JSONRPCResultResponse", []byte(tc.want)); err != nil {
				t.Errorf("not a JSONRPCResultResponse: %v", err)
			}
			if string(method) == "initialize" {
				sc = schemas[false] // no 2026-07-28 definition: it has no initialize
			}
			if err := sc.check(resultDefs[string(method)], rp.Result); err != nil {
				t.Errorf("not a %s: %v", resultDefs[string(method)], err)
			}
			checkStructured(t, outputs, rq.Params, rp.Result)
		})
	}
}

// TestMCPSchemasRefuse: the schema subsets are no rubber stamp: they
// refuse a result without what its era requires.
func TestMCPSchemasRefuse(t *testing.T) {
	legacy, modern := loadMCPSchemas(t, mcpSchemaLegacy), loadMCPSchemas(t, mcpSchemaModern)
	for _, tc := range []struct {
		sc       *mcpSchemas
		def, msg string
	}{
		{legacy, "ListToolsResult", `{"tool":[]}`},
		{legacy, "InitializeResult", `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x"}}`},
		{legacy, "CallToolResult", `{"content":[{"type":"text"}]}`},
		{modern, "EmptyResult", `{}`},
		{modern, "ListToolsResult", `{"tools":[],"resultType":"complete"}`},
		{modern, "DiscoverResult", `{"supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":"public","ttlMs":-1,"resultType":"complete"}`},
		{modern, "UnsupportedProtocolVersionError", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"requested":"x"}}}`},
	} {
		if err := tc.sc.check(tc.def, []byte(tc.msg)); err == nil {
			t.Errorf("%s accepted as %s", tc.msg, tc.def)
		}
	}
}

// outputSchemas returns the outputSchema of each tool that has one.
func outputSchemas(t *testing.T) map[string][]byte {
	var tools []struct {
		Name         string          `json:"name"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(toolsDoc, &tools); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, tool := range tools {
		if tool.OutputSchema != nil {
			out[tool.Name] = tool.OutputSchema
		}
	}
	return out
}

// checkStructured validates a successful tool result's structuredContent
// against the tool's outputSchema (a tool with one must give it).
func checkStructured(t *testing.T, outputs map[string][]byte, params, result []byte) {
	t.Helper()
	var call struct{ Name string }
	var res struct {
		IsError    bool            `json:"isError"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(params, &call) != nil || json.Unmarshal(result, &res) != nil || res.IsError {
		return
	}
	schema, ok := outputs[call.Name]
	switch {
	case ok && res.Structured == nil:
		t.Errorf("%s has an outputSchema but gave no structuredContent", call.Name)
	case ok:
		if err := validate(t, compileSchema(t, schema, ""), res.Structured); err != nil {
			t.Errorf("structuredContent %s does not fit the outputSchema: %v", res.Structured, err)
		}
	}
}

// TestToolSchemas: every tool's schemas compile, and a call's arguments
// are refused (a result with isError) exactly when they break the tool's
// inputSchema.
func TestToolSchemas(t *testing.T) {
	var tools []struct {
		Name                      string
		InputSchema, OutputSchema json.RawMessage
	}
	if err := json.Unmarshal(toolsDoc, &tools); err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{}
	for _, tool := range tools {
		inputs[tool.Name] = tool.InputSchema
		if tool.OutputSchema != nil {
			compileSchema(t, tool.OutputSchema, "")
		}
	}
	if len(inputs) != 2 || inputs["search"] == nil || inputs["sum"] == nil {
		t.Fatalf("tools %v", tools)
	}
	long, surrogates := strings.Repeat("é", 200), strings.Repeat(`\ud800`, 200)
	for _, tc := range []struct{ tool, args string }{
		{"search", `{"query":"a"}`}, {"search", `{"query":""}`}, {"search", `{"query":"a","limit":1}`}, {"search", `{"limit":100,"query":"x"}`},
		{"search", `{"query":"x","limit":1.0}`}, {"search", `{"query":"x","limit":1e2}`}, {"search", `{"query":"x","limit":0}`},
		{"search", `{"query":"x","limit":101}`}, {"search", `{"query":"x","limit":2.5}`}, {"search", `{"query":"x","limit":"2"}`},
		{"search", `{"query":"x","limit":null}`}, {"search", `{"query":1}`}, {"search", `{"query":null}`}, {"search", `{}`},
		{"search", `{"query":"x","other":1}`}, {"search", `{"query":"` + long + `"}`}, {"search", `{"query":"` + long + `e"}`},
		{"search", `{"query":"` + strings.Repeat("😀", 200) + `"}`}, {"search", `{"query":"` + surrogates + `"}`},
		{"search", `{"query":"` + surrogates + `a"}`}, {"search", `{"query":"x","query":1}`},
		{"sum", `{"values":[]}`}, {"sum", `{"values":[1,2.5,-3e2]}`}, {"sum", `{"values":[1,"2"]}`}, {"sum", `{"values":"1"}`},
		{"sum", `{}`}, {"sum", `{"values":[1],"x":0}`}, {"sum", `{"values":[null]}`}, {"sum", `{"values":[1e400]}`},
		{"sum", `{"values":[[1]]}`}, {"sum", `{"values":{"0":1}}`},
	} {
		t.Run(tc.tool+" "+tc.args[:min(len(tc.args), 40)], func(t *testing.T) {
			var res struct {
				Result struct {
					IsError bool `json:"isError"`
				} `json:"result"`
			}
			reply := run(t, 0, toolCall("1", tc.tool, tc.args)).reply
			if err := json.Unmarshal([]byte(reply), &res); err != nil {
				t.Fatalf("%v: %.300s", err, reply)
			}
			err := validate(t, compileSchema(t, inputs[tc.tool], ""), []byte(tc.args))
			if res.Result.IsError != (err != nil) {
				t.Errorf("the schema says %v, the tool answers %.300s", err, reply)
			}
		})
	}
}

// TestMCPVersions: the server's MCP revisions are the mcp profile's.
func TestMCPVersions(t *testing.T) {
	if mcpModern != profile.VersionModern || mcpLegacy != profile.VersionLegacy {
		t.Errorf("versions %s and %s, the profile's %s and %s", mcpModern, mcpLegacy, profile.VersionModern, profile.VersionLegacy)
	}
	var legacy []string
	for e := profile.EraLegacy; e.Legacy(); e++ {
		legacy = append(legacy, e.Version())
	}
	if fmt.Sprint(legacy) != fmt.Sprint(mcpInitializeVersions[:]) {
		t.Errorf("initialize speaks %v, the profile %v", mcpInitializeVersions, legacy)
	}
}

// handleConn runs the mcp profile's steps against Server.Handle, as a
// connection of rpcload's or the fuzzer's would.
type handleConn struct {
	s   *Server
	ids int
}

var errNoReply = errors.New("no reply")

func (c *handleConn) ControlID(dst []byte) []byte {
	c.ids++
	return append(dst, `"ctl-`+strconv.Itoa(c.ids)+`"`...)
}

func (c *handleConn) Send(msg []byte) error {
	if r := c.s.Handle(context.Background(), msg); r != nil {
		return fmt.Errorf("a reply to a notification: %s", r)
	}
	return nil
}

func (c *handleConn) Call(_, msg []byte) ([]byte, error) {
	if r := c.s.Handle(context.Background(), msg); r != nil {
		return r, nil
	}
	return nil, errNoReply
}

// TestMCPProfileHandshake: the mcp profile's own handshake succeeds in
// every era it may be told to speak: the probe finds the modern era (the
// default), and initialize gets the revision each legacy era asks for.
// Then tools/list and a call, with the params the profile writes for the
// era, are answered with results.
func TestMCPProfileHandshake(t *testing.T) {
	for _, tc := range []struct {
		era  string
		want profile.Era
	}{
		{"", profile.EraModern}, {"modern", profile.EraModern}, {"legacy", profile.EraLegacy},
		{"2025-06-18", profile.EraLegacy20250618}, {"2025-03-26", profile.EraLegacy20250326}, {"2024-11-05", profile.EraLegacy20241105},
	} {
		t.Run("era "+tc.era, func(t *testing.T) {
			p, err := profile.New(profile.MCP, profile.Options{MCPEra: tc.era})
			if err != nil {
				t.Fatal(err)
			}
			c := &handleConn{s: New(0)}
			era, err := profile.Handshake{Profile: p, Era: p.Era(), NoReply: errNoReply}.Run(c)
			if err != nil || era != tc.want {
				t.Fatalf("handshake: era %v (%s), %v; want %v", era, era.Version(), err, tc.want)
			}
			for _, call := range []struct{ method, params string }{
				{"tools/list", ""}, {"tools/call", `{"name":"sum","arguments":{"values":[1,2]}}`}, {"ping", ""},
			} {
				params, err := p.Params(era, call.method, []byte(call.params))
				if err != nil {
					t.Fatal(err)
				}
				reply := c.s.Handle(context.Background(), wire.AppendRequest(nil, 9, wire.IDInt, wire.AppendString(nil, call.method), params))
				var m wire.Message
				wire.Scan(reply, &m)
				if m.Kind != wire.KindResult || p.Check(&m, era) != 0 {
					t.Errorf("%s: %s", call.method, reply)
				}
			}
		})
	}
}
