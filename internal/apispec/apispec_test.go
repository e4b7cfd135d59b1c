package apispec

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

// testDoc has each shape FromOpenRPC reads: by-name, by-position and
// either params,
// required and optional ones, a content descriptor and a schema behind
// references, a method reference and an rpc.* method (both left out), an
// idempotent method.
const testDoc = `{
  "openrpc": "1.3.2", "info": {"title": "t", "version": "1"},
  "methods": [
    {"name": "countdown", "paramStructure": "by-name", "x-additionalProperties": false,
     "params": [{"name": "n", "required": true, "schema": {"type": "integer", "minimum": -10, "maximum": 1000}},
                {"$ref": "#/components/contentDescriptors/Verbose"}],
     "result": {"name": "steps", "schema": {"type": "array", "items": {"type": "integer"}}}},
    {"name": "add", "paramStructure": "by-position", "params": [{"name": "a", "required": true, "schema": {"$ref": "#/components/schemas/Small"}},
                               {"name": "b", "required": true, "schema": {"$ref": "#/components/schemas/Small"}},
                               {"name": "round", "schema": {"type": "boolean"}}],
     "result": {"name": "sum", "schema": {"type": "integer"}}, "x-idempotent": true},
    {"name": "now", "params": []},
    {"$ref": "#/components/methods/elsewhere"},
    {"name": "rpc.discover", "params": []}
  ],
  "components": {
    "schemas": {"Small": {"type": "integer", "minimum": -100, "maximum": 100}},
    "contentDescriptors": {"Verbose": {"name": "verbose", "schema": {"type": "boolean"}}}
  }
}`

func mustOpenRPC(t *testing.T) *API {
	t.Helper()
	api, err := FromOpenRPC([]byte(testDoc))
	if err != nil {
		t.Fatal(err)
	}
	return api
}

func TestFromOpenRPC(t *testing.T) {
	api := mustOpenRPC(t)
	if got := strings.Join(api.Names(), ","); got != "add,countdown,now" {
		t.Fatalf("methods %s, want add,countdown,now", got)
	}
	if len(api.Notes) != 2 || !strings.Contains(api.Notes[0], "reference") || !strings.Contains(api.Notes[1], "rpc.discover") {
		t.Errorf("notes %q: want the method reference and rpc.discover left out", api.Notes)
	}
	for _, tc := range []struct {
		method, params string
		want           Verdict
	}{
		{"countdown", `{"n":5}`, Valid},
		{"countdown", `{"n":-10,"verbose":true}`, Valid},
		{"countdown", `{"n":-11}`, Invalid},
		{"countdown", `{"n":"5"}`, Invalid},
		{"countdown", `{}`, Invalid},
		{"countdown", ``, Invalid}, // absent params are {} for by-name
		{"countdown", `[5]`, Invalid},
		{"countdown", `{"n":5,"verbose":1}`, Invalid}, // through the descriptor reference
		{"countdown", `{"n":5,"n":6}`, NotJudged},
		{"countdown", `{"n":5,"x":6}`, Invalid}, // x-additionalProperties false
		{"countdown", `{"n":5e0}`, NotJudged},
		{"countdown", `{"n":-0}`, NotJudged},
		{"add", `[1,2]`, Valid},
		{"add", `[1,2,true]`, Valid},
		{"add", `[1]`, Invalid},
		{"add", `[1,2,true,4]`, Invalid},
		{"add", `[1,101]`, Invalid}, // through the schema reference
		{"add", `{"a":1,"b":2}`, Invalid},
		{"now", ``, Valid}, // absent params are [] for by-position
		{"now", `[]`, Valid},
		{"now", `[1]`, Invalid},
		{"now", `{}`, Valid}, // "either", the default: by name too
		{"now", `{"x":1}`, Valid},
		{"now", `3`, Invalid},
	} {
		m := find(t, api, tc.method)
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		if got, why := m.CheckParams(params); got != tc.want {
			t.Errorf("%s %s: verdict %d (%s), want %d", tc.method, tc.params, got, why, tc.want)
		} else if got == Invalid && !strings.HasPrefix(why, "at /") {
			t.Errorf("%s %s: why %q does not say where", tc.method, tc.params, why)
		}
	}
	if add := find(t, api, "add"); !add.Idempotent || find(t, api, "countdown").Idempotent {
		t.Error("x-idempotent is not read")
	}
	for _, tc := range []struct {
		method, result string
		want           Verdict
	}{
		{"countdown", `[2,1,0]`, Valid},
		{"countdown", `[2,"1"]`, Invalid},
		{"add", `3`, Valid},
		{"add", `3.5`, Invalid},
		{"now", `"12:00"`, NotJudged}, // no result schema
	} {
		if got, why := find(t, api, tc.method).CheckResult([]byte(tc.result)); got != tc.want {
			t.Errorf("%s result %s: verdict %d (%s), want %d", tc.method, tc.result, got, why, tc.want)
		}
	}
}

func find(t *testing.T, api *API, name string) *Method {
	t.Helper()
	for _, m := range api.Methods {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no method %s", name)
	return nil
}

func TestFromOpenRPCErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`[]`, "not a JSON object"},
		{`{"methods": 3}`, `no "methods" list`},
		{`{"methods": [{"name": "m", "params": [{"name": "x", "schema": {"$ref": "#/components/schemas/Gone"}}]}]}`, "does not define"},
	} {
		if _, err := FromOpenRPC([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.doc, err, tc.want)
		}
	}
	api, err := FromOpenRPC([]byte(`{"methods": [{"name": "m", "params": [{"name": "x", "schema": {"type": 7}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := find(t, api, "m"); m.Params != nil || len(api.Notes) != 1 || !strings.Contains(api.Notes[0], "does not compile") {
		t.Errorf("a schema that does not compile: params %s, notes %q", m.Params, api.Notes)
	}
}

const testTools = `{"tools": [
  {"name": "search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"], "additionalProperties": false},
   "outputSchema": {"type": "object", "properties": {"hits": {"type": "array"}}, "required": ["hits"]}},
  {"name": "ping_tool", "inputSchema": {"type": "object"}},
  {"inputSchema": {}}
]}`

func TestFromMCP(t *testing.T) {
	api, err := FromMCP([]byte(testTools), []byte(`{"prompts": [{"name": "greet", "arguments": [{"name": "who", "required": true}, {"name": "tone"}]}]}`),
		[]byte(`{"resources": [{"uri": "file:///a"}, {"uri": "file:///b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(api.Names(), ","); got != "prompt greet,resources/read,tool ping_tool,tool search" {
		t.Fatalf("methods %s", got)
	}
	if len(api.Notes) != 1 || !strings.Contains(api.Notes[0], "no name") {
		t.Errorf("notes %q", api.Notes)
	}
	search := find(t, api, "tool search")
	for _, tc := range []struct {
		args string
		want Verdict
	}{
		{`{"query":""}`, Valid},
		{`{"query":1}`, Invalid},
		{`{"query":"a","x":1}`, Invalid},
		{``, Invalid}, // absent arguments are {}
	} {
		var args []byte
		if tc.args != "" {
			args = []byte(tc.args)
		}
		if got, why := search.CheckParams(args); got != tc.want {
			t.Errorf("search %s: verdict %d (%s), want %d", tc.args, got, why, tc.want)
		}
	}
	for _, tc := range []struct {
		result string
		want   Verdict
	}{
		{`{"content":[],"structuredContent":{"hits":[]}}`, Valid},
		{`{"content":[],"structuredContent":{}}`, Invalid},
		{`{"content":[]}`, Invalid},
		{`{"content":[],"isError":true}`, NotJudged},
	} {
		if got, why := search.CheckResult([]byte(tc.result)); got != tc.want {
			t.Errorf("search result %s: verdict %d (%s), want %d", tc.result, got, why, tc.want)
		}
	}
	greet := find(t, api, "prompt greet")
	if v, _ := greet.CheckParams([]byte(`{"tone":"x"}`)); v != Invalid {
		t.Errorf("a prompt without its required argument: verdict %d", v)
	}
	if rr := find(t, api, "resources/read"); len(rr.Examples) != 2 {
		t.Errorf("resources/read examples %q", rr.Examples)
	}
}

func TestFindAndFrame(t *testing.T) {
	api := mustOpenRPC(t)
	tools, err := FromMCP([]byte(testTools), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Merge(tools); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		frame, method, params string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}`, "add", "[1,2]"},
		{`{"jsonrpc":"2.0","id":1,"method":"now"}`, "now", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"q"}}}`, "tool search", `{"query":"q"}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{},"name":"search"}}`, "tool search", `{}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search"}}`, "tool search", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","name":"ping_tool"}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{},"arguments":{}}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["search"]}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"sub"}`, "", ""},
	} {
		var m wire.Message
		wire.Scan([]byte(tc.frame), &m)
		meth, params, ok := api.Find(&m)
		switch {
		case tc.method == "" && ok:
			t.Errorf("%s: found %s, want nothing", tc.frame, meth.Name)
		case tc.method != "" && (!ok || meth.Name != tc.method || string(params) != tc.params):
			t.Errorf("%s: found %v %s params %s, want %s params %s", tc.frame, ok, nameOf(meth), params, tc.method, tc.params)
		}
	}
	for _, m := range api.Methods {
		for _, params := range []string{"", `{"query":"x"}`, "[1,2]"} {
			var p []byte
			if params != "" {
				p = []byte(params)
			}
			frame := m.Frame(nil, []byte("7"), p)
			var msg wire.Message
			wire.Scan(frame, &msg)
			got, gotParams, ok := api.Find(&msg)
			if msg.Kind != wire.KindRequest || !ok || got != m || string(gotParams) != params {
				t.Errorf("%s with %s: frame %s reads back as %v %s %s", m.Name, params, frame, ok, nameOf(got), gotParams)
			}
		}
	}
}

func nameOf(m *Method) string {
	if m == nil {
		return "<nil>"
	}
	return m.Name
}

func TestUnambiguous(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{`{"a":1,"b":[true,false,null,"x",-1.5]}`, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":1,"\u0062":2}}`, false}, // the same name, escaped
		{`1e3`, false},
		{`-0`, false},
		{`-0.0`, false},
		{`-0.5`, true},
		{`9223372036854775807`, true},
		{"1" + strings.Repeat("0", 400), false},
		{`"\ud800"`, false},
		{`"\ud83d\ude00"`, true},
		{"\"\xff\"", false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`[1] 2`, false},
		{`tru`, false},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), false},
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), true},
	} {
		if got := Unambiguous([]byte(tc.v)); got != tc.want {
			t.Errorf("Unambiguous(%.40s) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestSeed(t *testing.T) {
	api := mustOpenRPC(t)
	s, err := Seed("add", []byte(`[3,4]`))
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Add(s); err != nil {
		t.Fatal(err)
	}
	if add := find(t, api, "add"); len(add.Examples) != 1 || add.Params == nil {
		t.Errorf("a seed of a documented method: examples %q params %s", add.Examples, add.Params)
	}
	tool, err := Seed("tools/call", []byte(`{"name":"search","arguments":{"query":"a"}}`))
	if err != nil || tool.Kind != Tool || tool.Target != "search" || string(tool.Examples[0]) != `{"query":"a"}` {
		t.Errorf("tool seed %+v %v", tool, err)
	}
	for _, tc := range []struct{ method, params, want string }{
		{"", "", "needs a method"},
		{"m", "3", "JSON object or array"},
		{"m", "{", "JSON object or array"},
		{"tools/call", `{"arguments":{}}`, `{"name": NAME`},
	} {
		var p []byte
		if tc.params != "" {
			p = []byte(tc.params)
		}
		if _, err := Seed(tc.method, p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Seed(%q, %q): %v, want %q", tc.method, tc.params, err, tc.want)
		}
	}
	if unknown := api.SetIdempotent([]string{"countdown", "nope"}); len(unknown) != 1 || unknown[0] != "nope" || !find(t, api, "countdown").Idempotent {
		t.Errorf("SetIdempotent: unknown %q", unknown)
	}
}

// TestPropose: what Propose offers as valid the validator finds valid, and
// what it offers as invalid, invalid; invalid params are nearly always an
// array or an object (a scalar is JSON-RPC's invalid request, which says
// little of the method).
func TestPropose(t *testing.T) {
	api := mustOpenRPC(t)
	tools, _ := FromMCP([]byte(testTools), nil, nil)
	if err := api.Merge(tools); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	scalars := 0
	for _, m := range api.Methods {
		for i := range 300 {
			valid := i%2 == 0
			p, broke, err := m.Propose(r, valid)
			if err != nil {
				t.Fatalf("%s valid=%v: %v", m.Name, valid, err)
			}
			want := Invalid
			if valid {
				want = Valid
			}
			if got, why := m.CheckParams(p); got != want {
				t.Fatalf("%s: proposed %s (valid=%v, broke %q) judged %d (%s)", m.Name, p, valid, broke, got, why)
			}
			if !valid && (len(p) == 0 || p[0] != '{' && p[0] != '[') {
				scalars++
			}
		}
	}
	if invalid := len(api.Methods) * 150; scalars*50 > invalid {
		t.Errorf("%d of %d invalid params proposed were no array or object (more than 2%%)", scalars, invalid)
	}
}

// TestFromJSON: an API written with encoding/json reads back with the same
// verdicts (a finding's directory keeps its method so).
func TestFromJSON(t *testing.T) {
	api := mustOpenRPC(t)
	tools, _ := FromMCP([]byte(testTools), nil, nil)
	if err := api.Merge(tools); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(api.Methods)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(back.Names(), ","), strings.Join(api.Names(), ","); got != want {
		t.Fatalf("methods %s, want %s", got, want)
	}
	for i, m := range back.Methods {
		if m.Index() != i || m.Kind != api.Methods[i].Kind || m.Positional != api.Methods[i].Positional {
			t.Errorf("%s: index %d kind %s positional %v", m.Name, m.Index(), m.Kind, m.Positional)
		}
	}
	if v, _ := find(t, back, "countdown").CheckParams([]byte(`{"n":-11}`)); v != Invalid {
		t.Error("the params schema did not come back")
	}
	if v, _ := find(t, back, "tool search").CheckResult([]byte(`{"content":[]}`)); v != Invalid {
		t.Error("the output schema did not come back")
	}
	if _, err := FromJSON([]byte(`[{"call":"x","kind":"gadget"}]`)); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("an unknown kind: %v", err)
	}
}

// countTemplate renders {"n": seq}, or nothing once seq passes max.
type countTemplate struct{ max uint64 }

func (c countTemplate) Append(dst []byte, _ *rand.Rand, seq uint64) ([]byte, bool) {
	if seq > c.max {
		return dst, false
	}
	return fmt.Appendf(dst, `{"n":%d}`, seq), true
}

// TestProposeTemplate: a method with a template and no schema gets its
// valid params from the template, anew each time; a template with nothing
// left falls back to the examples.
func TestProposeTemplate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m := &Method{Call: "m", Template: countTemplate{max: 1 << 40}, Examples: []json.RawMessage{[]byte(`{"n":-1}`)}}
	seen := map[string]bool{}
	for range 20 {
		p, _, err := m.Propose(r, true)
		if err != nil || !strings.HasPrefix(string(p), `{"n":`) || string(p) == `{"n":-1}` {
			t.Fatalf("proposed %s %v, want the template's", p, err)
		}
		seen[string(p)] = true
	}
	if len(seen) < 15 {
		t.Errorf("%d distinct params in 20: the template is not rendered anew", len(seen))
	}
	m.Template = countTemplate{max: 0}
	if p, _, _ := m.Propose(r, true); string(p) != `{"n":-1}` {
		t.Errorf("an exhausted template: proposed %s, want the example", p)
	}
}
