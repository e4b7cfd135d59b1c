package fuzztarget

import (
	"bytes"
	"encoding/json"
	"github.com/rpcload/rpcload/internal/apispec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// countList is countdown's result for n >= 0.
func countList(n int) string {
	parts := make([]string, 0, n+1)
	for i := n; i >= 0; i-- {
		parts = append(parts, strconv.Itoa(i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

const countdownUsage = `countdown takes params by name: {\"n\": integer}`

// modernMeta is the _meta of a 2026-07-28 request, as the mcp profile
// writes it.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"rpcfuzz","version":"0.1.0"}}`

// TestAPIAnswers: countdown, rpc.discover and the _meta every request is
// read for get their documented answers, byte for byte, whether the bugs
// are planted or not (but for those the input triggers, left out).
func TestAPIAnswers(t *testing.T) {
	countdown := func(params string) string { return req("1", `"countdown"`, params) }
	fires := map[string]Bug{"repeated n, the last kept": DuplicateKey}
	doc := string(openRPCDoc)
	for _, tc := range []struct{ name, in, want string }{
		{"n 3", countdown(`{"n":3}`), ok("1", "[3,2,1,0]")},
		{"n 0", countdown(`{"n":0}`), ok("1", "[0]")},
		{"n -0", countdown(`{"n":-0}`), ok("1", "[0]")},
		{"n 1000", countdown(`{"n":1000}`), ok("1", countList(1000))},
		{"n 1e3", countdown(`{"n":1e3}`), ok("1", countList(1000))},
		{"n 5.0", countdown(`{ "n" : 5.0 }`), ok("1", countList(5))},
		{"n 0.5e1", countdown(`{"n":0.5e1}`), ok("1", countList(5))},
		{"n 500e-2", countdown(`{"n":500e-2}`), ok("1", countList(5))},
		{"n 1001", countdown(`{"n":1001}`), badParams("1", `"n must be between -1000000 and 1000"`)},
		{"n 1e400", countdown(`{"n":1e400}`), badParams("1", `"n must be between -1000000 and 1000"`)},
		{"n -1000001", countdown(`{"n":-1000001}`), badParams("1", `"n must be between -1000000 and 1000"`)},
		{"n 1.5", countdown(`{"n":1.5}`), badParams("1", `"n must be an integer"`)},
		{"n 0.05", countdown(`{"n":0.05}`), badParams("1", `"n must be an integer"`)},
		{"n 1e-400", countdown(`{"n":1e-400}`), badParams("1", `"n must be an integer"`)},
		{"n a string", countdown(`{"n":"1"}`), badParams("1", `"n must be an integer"`)},
		{"n null", countdown(`{"n":null}`), badParams("1", `"n must be an integer"`)},
		{"n missing", countdown(`{}`), badParams("1", `"`+countdownUsage+`; n is missing"`)},
		{"no params", countdown(""), badParams("1", `"`+countdownUsage+`; n is missing"`)},
		{"by position", countdown(`[3]`), badParams("1", `"`+countdownUsage+`, not an array"`)},
		{"another member", countdown(`{"n":1,"x":2}`), badParams("1", `"unknown param \"x\" (countdown takes only n)"`)},
		{"repeated n, the last kept", countdown(`{"n":-1,"n":2}`), ok("1", "[2,1,0]")},

		{"discover, no params", req("7", `"rpc.discover"`, ""), ok("7", doc)},
		{"discover []", req("7", `"rpc.discover"`, "[]"), ok("7", doc)},
		{"discover {}", req("7", `"rpc.discover"`, "{ }"), ok("7", doc)},
		{"discover [1]", req("7", `"rpc.discover"`, "[1]"), badParams("7", `"rpc.discover takes no params"`)},
		{"discover {a}", req("7", `"rpc.discover"`, `{"a":1}`), badParams("7", `"rpc.discover takes no params"`)},

		// A modern request is read as MCP reads one, whatever its method.
		{"echo, modern", req("2", `"echo"`, `{`+modernMeta+`,"x":1}`), ok("2", `{`+modernMeta+`,"x":1}`)},
		{"echo, an unsupported version", req("2", `"echo"`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"1.0"}}`),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"1.0","supported":["2026-07-28"]}}}`},
		{"countdown, a legacy version in _meta", countdown(`{"n":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2025-11-25","supported":["2026-07-28"]}}}`},
		{"add, modern without capabilities", req("3", `"add"`, `{"a":1,"b":2,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`),
			badParams("3", `"params._meta needs io.modelcontextprotocol/clientCapabilities, an object"`)},
		{"echo, a version that is no string", req("2", `"echo"`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}`),
			ok("2", `{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}`)},
		{"echo, _meta no object", req("2", `"echo"`, `{"_meta":[]}`), ok("2", `{"_meta":[]}`)},
		{"countdown, modern", countdown(`{"n":1,` + modernMeta + `}`), badParams("1", `"unknown param \"_meta\" (countdown takes only n)"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, bugs := range []Bug{0, AllBugs &^ fires[tc.name]} {
				if got := run(t, bugs, tc.in); got != (outcome{reply: tc.want}) {
					t.Errorf("bugs %q:\n got %.400v\nwant %.400v", bugs, got, outcome{reply: tc.want})
				}
			}
		})
	}
}

// TestHandlerTriggers: each handler bug crashes, naming it, on calls that
// fit the method's or tool's schema and meet the trigger, with that bug
// planted or all of them; without it they get the answer.
func TestHandlerTriggers(t *testing.T) {
	values := func(n int, v string) string { return strings.TrimSuffix(strings.Repeat(v+",", n), ",") }
	for _, tc := range []struct {
		name, in string
		bug      Bug
		want     string
	}{
		{"TriggerFrame negative_int", string(TriggerFrame(NegativeInt)), NegativeInt, ok("1", "[]")},
		{"n at the minimum", req("1", `"countdown"`, `{"n":-1000000}`), NegativeInt, ok("1", "[]")},
		{"n -1e0", req("1", `"countdown"`, `{"n":-1e0}`), NegativeInt, ok("1", "[]")},
		{"n -5.0", req(`"x"`, `"countdown"`, `{"n":-5.0}`), NegativeInt, ok(`"x"`, "[]")},
		{"negative n in a batch", "[" + req("1", `"echo"`, "") + "," + req("2", `"countdown"`, `{"n":-7}`) + "]", NegativeInt,
			"[" + ok("1", "null") + "," + ok("2", "[]") + "]"},

		{"TriggerFrame empty_string", string(TriggerFrame(EmptyString)), EmptyString, ok("1", searchResult("", 3))},
		{"empty query, limit 1", toolCall("1", "search", `{"limit":1,"query":""}`), EmptyString, ok("1", searchResult("", 1))},
		{"empty query, modern", req("1", `"tools/call"`, `{`+modernMeta+`,"name":"search","arguments":{"query":""}}`), EmptyString,
			ok("1", completed(searchResult("", 3)))},

		{"TriggerFrame long_array", string(TriggerFrame(LongArray)), LongArray, ok("1", toolResult("0", false))},
		{"1001 floats", toolCall("1", "sum", `{"values":[`+values(1001, "0.5")+`]}`), LongArray, ok("1", toolResult("500.5", false))},
		{"5000 ones", toolCall("1", "sum", `{"values":[`+values(5000, "1")+`]}`), LongArray, ok("1", toolResult("5000", false))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, bugs := range []Bug{tc.bug, AllBugs} {
				if got := run(t, bugs, tc.in); got != (outcome{crash: tc.bug}) {
					t.Errorf("planted %q: got %.300v, want the crash", bugs, got)
				}
			}
			for _, bugs := range []Bug{0, AllBugs &^ tc.bug} {
				if got := run(t, bugs, tc.in); got != (outcome{reply: tc.want}) {
					t.Errorf("planted %q:\n got %.300v\nwant %.300v", bugs, got, outcome{reply: tc.want})
				}
			}
		})
	}
}

// TestHandlerNearMisses: calls one step from a handler bug's trigger (a
// neighbouring value, a schema broken elsewhere, a notification, which
// runs no method) get their answer with every bug planted.
func TestHandlerNearMisses(t *testing.T) {
	values := func(n int, v string) string { return strings.TrimSuffix(strings.Repeat(v+",", n), ",") }
	for _, tc := range []struct{ name, in, want string }{
		{"n 0", req("1", `"countdown"`, `{"n":0}`), ok("1", "[0]")},
		{"n -0", req("1", `"countdown"`, `{"n":-0.0e5}`), ok("1", "[0]")},
		{"n below the minimum", req("1", `"countdown"`, `{"n":-1000001}`), badParams("1", `"n must be between -1000000 and 1000"`)},
		{"n -0.5", req("1", `"countdown"`, `{"n":-0.5}`), badParams("1", `"n must be an integer"`)},
		{"n -1 with another member", req("1", `"countdown"`, `{"n":-1,"m":0}`), badParams("1", `"unknown param \"m\" (countdown takes only n)"`)},
		{"n -1 by position", req("1", `"countdown"`, `[-1]`), badParams("1", `"`+countdownUsage+`, not an array"`)},
		{"n -1 as a string", req("1", `"countdown"`, `{"n":"-1"}`), badParams("1", `"n must be an integer"`)},
		{"n -1 in a notification", `{"jsonrpc":"2.0","method":"countdown","params":{"n":-1}}`, ""},
		{"n -1 to echo", req("1", `"echo"`, `{"n":-1}`), ok("1", `{"n":-1}`)},

		{"query a", toolCall("1", "search", `{"query":"a"}`), ok("1", searchResult("a", 3))},
		{"query space", toolCall("1", "search", `{"query":" "}`), ok("1", searchResult(" ", 3))},
		{"query NUL", toolCall("1", "search", `{"query":"\u0000"}`), ok("1", searchResult("\x00", 3))},
		{"empty query, limit 0", toolCall("1", "search", `{"query":"","limit":0}`), ok("1", toolResult("search: limit must be between 1 and 100", true))},
		{"empty query, another argument", toolCall("1", "search", `{"query":"","q":1}`), ok("1", toolResult(`search: unknown argument "q"`, true))},
		{"empty query in a notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search","arguments":{"query":""}}}`, ""},
		{"empty query to sum", toolCall("1", "sum", `{"query":""}`), ok("1", toolResult(`sum: unknown argument "query"`, true))},

		{"1000 values", toolCall("1", "sum", `{"values":[`+values(1000, "2")+`]}`), ok("1", toolResult("2000", false))},
		{"1001 values, one a string", toolCall("1", "sum", `{"values":[`+values(1000, "2")+`,"2"]}`), ok("1", toolResult("sum: values[1000] must be a number", true))},
		{"1001 values nested", toolCall("1", "sum", `{"values":[[`+values(1001, "2")+`]]}`), ok("1", toolResult("sum: values[0] must be a number", true))},
		{"1001 values in a notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"sum","arguments":{"values":[` + values(1001, "0") + `]}}}`, ""},
		{"1001 values to search", toolCall("1", "search", `{"query":"x","values":[`+values(1001, "0")+`]}`), ok("1", toolResult(`search: unknown argument "values"`, true))},
	} {
		if got := run(t, AllBugs, tc.in); got != (outcome{reply: tc.want}) {
			t.Errorf("%s:\n got %.300v\nwant %.300v", tc.name, got, outcome{reply: tc.want})
		}
	}
}

// openRPCMethod is what the tests read of a method in the document.
type openRPCMethod struct {
	Name           string `json:"name"`
	ParamStructure string `json:"paramStructure"`
	Params         []struct {
		Name     string          `json:"name"`
		Required bool            `json:"required"`
		Schema   json.RawMessage `json:"schema"`
	} `json:"params"`
	Result struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
	} `json:"result"`
	Extra *bool `json:"x-additionalProperties"`
}

// TestOpenRPCDocument: rpc.discover's result is one line of JSON, an
// OpenRPC 1.2.6 document listing add and countdown (not rpc.discover, nor
// echo, whose any params OpenRPC cannot describe); countdown's schemas are
// the contract. Read as rpcfuzz reads it (apispec), every call the
// handlers answer has params the document accepts and a result that fits,
// and every call whose params it rejects is refused with -32602: the
// planted server is a correct one to the API-aware oracles.
func TestOpenRPCDocument(t *testing.T) {
	reply := run(t, 0, req("1", `"rpc.discover"`, "")).reply
	var resp struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(reply), &resp); err != nil || strings.ContainsAny(reply, "\r\n") {
		t.Fatalf("rpc.discover's reply is not one line of JSON (%v): %.300s", err, reply)
	}
	var doc struct {
		OpenRPC string `json:"openrpc"`
		Info    struct {
			Title, Description string
		} `json:"info"`
		Methods []openRPCMethod `json:"methods"`
	}
	if err := json.Unmarshal(resp.Result, &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	methods := map[string]openRPCMethod{}
	for _, m := range doc.Methods {
		names = append(names, m.Name)
		methods[m.Name] = m
	}
	if doc.OpenRPC != "1.2.6" || doc.Info.Title != "fuzztarget" || !slices.Equal(names, []string{"add", "countdown"}) ||
		!strings.Contains(doc.Info.Description, "rpc.discover") {
		t.Fatalf("document %s %+v, methods %v", doc.OpenRPC, doc.Info, names)
	}
	cd := methods["countdown"]
	if len(cd.Params) != 1 || cd.Params[0].Name != "n" || !cd.Params[0].Required || cd.ParamStructure != "by-name" ||
		string(cd.Params[0].Schema) != `{"type":"integer","minimum":-1000000,"maximum":1000}` ||
		string(cd.Result.Schema) != `{"type":"array","items":{"type":"integer"}}` || cd.Extra == nil || *cd.Extra {
		t.Errorf("countdown is described as %+v", cd)
	}
	api, err := apispec.FromOpenRPC(resp.Result)
	if err != nil || len(api.Notes) != 0 {
		t.Fatalf("apispec reads the document with %v, notes %q", err, api.Notes)
	}
	byName := map[string]*apispec.Method{}
	for _, m := range api.Methods {
		byName[m.Name] = m
	}
	for _, tc := range []struct {
		method, params string // params "" for none
	}{
		{"countdown", `{"n":0}`}, {"countdown", `{"n":3}`}, {"countdown", `{"n":1000}`}, {"countdown", `{"n":-1}`},
		{"countdown", `{"n":-1000000}`}, {"countdown", `{"n":1001}`}, {"countdown", `{"n":-1000001}`},
		{"countdown", `{"n":1.5}`}, {"countdown", `{"n":-0.5}`},
		{"countdown", `{"n":"1"}`}, {"countdown", `{"n":null}`}, {"countdown", `{"n":true}`}, {"countdown", `{"n":[1]}`},
		{"countdown", `{}`}, {"countdown", `{"n":1,"x":2}`}, {"countdown", `{"m":1}`}, {"countdown", `[1]`}, {"countdown", ""},
		{"add", `[1,2]`}, {"add", `[1.5,-0.5]`}, {"add", `[9223372036854775807,1]`}, {"add", `{"a":1,"b":2}`}, {"add", `{"b":1000,"a":0}`},
		{"add", `[1]`}, {"add", `[1,2,3]`}, {"add", `{"a":1}`}, {"add", `{"a":1,"b":2,"c":3}`}, {"add", `["1",2]`}, {"add", ""},
	} {
		t.Run(tc.method+" "+tc.params, func(t *testing.T) {
			m := byName[tc.method]
			var got struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(run(t, 0, req("1", strconv.Quote(tc.method), tc.params)).reply), &got); err != nil {
				t.Fatal(err)
			}
			var params []byte
			if tc.params != "" {
				params = []byte(tc.params)
			}
			v, why := m.CheckParams(params)
			switch {
			case v == apispec.NotJudged:
				t.Fatalf("params %s not judged", tc.params)
			case got.Result != nil && v != apispec.Valid:
				t.Errorf("the handler answers params the document rejects (%s)", why)
			case got.Result == nil && v == apispec.Valid:
				t.Errorf("the handler refuses params the document accepts (error %+v)", got.Error)
			case got.Result == nil && got.Error.Code != -32602:
				t.Errorf("params the document rejects (%s) are refused with %d", why, got.Error.Code)
			}
			if got.Result != nil {
				if rv, rwhy := m.CheckResult(got.Result); rv != apispec.Valid {
					t.Errorf("the result %.200s does not fit the document: %s", got.Result, rwhy)
				}
			}
		})
	}
}

// TestEmbeddedDocuments: the embedded files are compacted, and a broken
// one panics naming itself.
func TestEmbeddedDocuments(t *testing.T) {
	for name, b := range map[string][]byte{"openrpc.json": openRPCDoc, "tools.json": toolsDoc} {
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil || !bytes.Equal(compact.Bytes(), b) {
			t.Errorf("%s is not compact JSON (%v)", name, err)
		}
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "broken.json") {
			t.Errorf("recovered %v", v)
		}
	}()
	mustCompact("broken.json", []byte("{"))
}

// TestSchemaInt: integers as JSON Schema reads them, against the bounds.
func TestSchemaInt(t *testing.T) {
	for _, tc := range []struct {
		raw              string
		v                int64
		integer, inRange bool
	}{
		{"0", 0, true, true}, {"-0", 0, true, true}, {"0.000", 0, true, true}, {"0e-99999999999999", 0, true, true},
		{"7", 7, true, true}, {"-7", -7, true, true}, {"7.0", 7, true, true}, {"70e-1", 7, true, true}, {"0.07e2", 7, true, true},
		{"1000", 1000, true, true}, {"1e3", 1000, true, true}, {"1001", 0, true, false}, {"-1000000", -1000000, true, true},
		{"-1000001", 0, true, false}, {"1e18", 0, true, false}, {"1e999999999999999999999", 0, true, false},
		{"123456789012345678901234567890", 0, true, false},
		{"0.5", 0, false, false}, {"7.01", 0, false, false}, {"1e-1", 0, false, false}, {"1e-999999999999", 0, false, false},
		{"1.0000000000000000000001", 0, false, false}, {`"7"`, 0, false, false}, {"true", 0, false, false}, {"null", 0, false, false},
	} {
		v, integer, inRange := schemaInt([]byte(tc.raw), -1000000, 1000)
		if v != tc.v && tc.inRange || integer != tc.integer || inRange != tc.inRange {
			t.Errorf("schemaInt(%s) = %d, %v, %v; want %d, %v, %v", tc.raw, v, integer, inRange, tc.v, tc.integer, tc.inRange)
		}
	}
}
