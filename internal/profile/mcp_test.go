package profile

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

func TestMCPParams(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	tests := []struct {
		name   string
		era    Era
		params string // "<nil>" for nil
		want   string // "" with wantErr
		err    string
	}{
		{"absent", EraModern, "<nil>", `{"_meta":` + fullMeta + `}`, ""},
		{"blank", EraModern, " \n", `{"_meta":` + fullMeta + `}`, ""},
		{"empty object", EraModern, `{}`, `{"_meta":` + fullMeta + `}`, ""},
		{"empty object with space", EraModern, " { \n } ", `{"_meta":` + fullMeta + " \n }", ""},
		{"object", EraModern, `{"name":"echo","arguments":{"x":[1,{"_meta":2}]}}`,
			`{"_meta":` + fullMeta + `,"name":"echo","arguments":{"x":[1,{"_meta":2}]}}`, ""},
		{"nested _meta is not params._meta", EraModern, `{"a":{"_meta":{}}}`, `{"_meta":` + fullMeta + `,"a":{"_meta":{}}}`, ""},
		{"empty _meta", EraModern, `{"name":"x","_meta":{}}`, `{"name":"x","_meta":` + fullMeta + `}`, ""},
		{"_meta with other keys kept", EraModern, `{"_meta":{"progressToken":7,"com.example/k":"v"}}`,
			`{"_meta":{` + metaPV + `,` + metaCC + `,` + metaCI + `,"progressToken":7,"com.example/k":"v"}}`, ""},
		{"reserved key kept with its value", EraModern, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}`,
			`{"_meta":{` + metaCC + `,` + metaCI + `,"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}`, ""},
		{"escaped names recognised", EraModern, `{"\u005fmeta":{"io.modelcontextprotocol\/clientInfo":{"name":"me","version":"1"}}}`,
			`{"\u005fmeta":{` + metaPV + `,` + metaCC + `,"io.modelcontextprotocol\/clientInfo":{"name":"me","version":"1"}}}`, ""},
		{"complete _meta unchanged", EraModern, `{"_meta":` + fullMeta + `}`, `{"_meta":` + fullMeta + `}`, ""},
		{"array", EraModern, `[1,2]`, "", "not an array"},
		{"empty array", EraModern, ` []`, "", "not an array"},
		{"scalar", EraModern, `5`, "", "must be an object"},
		{"null", EraModern, `null`, "", "must be an object"},
		{"string", EraModern, `"x"`, "", "must be an object"},
		{"invalid", EraModern, `{"a":`, "", "not valid JSON"},
		{"trailing data", EraModern, `{} {}`, "", "not valid JSON"},
		{"_meta array", EraModern, `{"_meta":[]}`, "", "_meta must be an object"},
		{"_meta null", EraModern, `{"_meta":null}`, "", "_meta must be an object"},
		{"_meta twice", EraModern, `{"_meta":{},"x":1,"_meta":{}}`, "", "_meta twice"},

		{"legacy absent", EraLegacy, "<nil>", "<nil>", ""},
		{"legacy object unchanged", EraLegacy, ` {"name":"x"} `, ` {"name":"x"} `, ""},
		{"legacy _meta untouched", EraLegacy20250618, `{"_meta":{"progressToken":1}}`, `{"_meta":{"progressToken":1}}`, ""},
		{"legacy array", EraLegacy, `[]`, "", "not an array"},
		{"legacy null", EraLegacy, `null`, "", "must be an object"},
		{"legacy invalid", EraLegacy20241105, `{"a"}`, "", "not valid JSON"},

		{"era auto", EraAuto, `{}`, "", "not known yet"},
		{"era none", EraNone, "<nil>", "", "not known yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in []byte
			if tc.params != "<nil>" {
				in = []byte(tc.params)
			}
			got, err := p.Params(tc.era, "tools/call", in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "profile: ") {
					t.Fatalf("Params(%s) = %s, %v; want error containing %q", tc.params, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Params(%s): %v", tc.params, err)
			}
			if tc.want == "<nil>" {
				if got != nil {
					t.Fatalf("Params(nil) = %q; want nil", got)
				}
				return
			}
			if string(got) != tc.want {
				t.Fatalf("Params(%s)\n got %s\nwant %s", tc.params, got, tc.want)
			}
			if tc.era.Modern() {
				v := decode(t, got)
				for _, k := range metaKeys {
					if path(v, "_meta", k) == nil {
						t.Errorf("%s: _meta lacks %s", got, k)
					}
				}
			}
		})
	}
}

func TestMCPParamsClientInfo(t *testing.T) {
	p := mustNew(t, MCP, Options{ClientName: `a "quoted" name`, ClientVersion: "1.2.3"})
	got, err := p.Params(EraModern, "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := decode(t, got)
	ci := path(v, "_meta", metaClientInfo)
	if want := map[string]any{"name": `a "quoted" name`, "version": "1.2.3"}; !reflect.DeepEqual(ci, want) {
		t.Errorf("clientInfo = %v; want %v", ci, want)
	}
	if caps, ok := path(v, "_meta", metaClientCapabilities).(map[string]any); !ok || len(caps) != 0 {
		t.Errorf("clientCapabilities = %v; want {}", caps)
	}
	if pv := path(v, "_meta", metaProtocolVersion); pv != "2026-07-28" {
		t.Errorf("protocolVersion = %v", pv)
	}
}

func TestMCPHeaders(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	pv := func(v string) Header { return Header{HeaderProtocolVersion, v} }
	meth := func(v string) Header { return Header{HeaderMethod, v} }
	name := func(v string) Header { return Header{HeaderName, v} }
	tests := []struct {
		era    Era
		method string
		params string
		want   []Header
	}{
		{EraModern, "tools/call", `{"_meta":` + fullMeta + `,"name":"echo"}`, []Header{pv("2026-07-28"), meth("tools/call"), name("echo")}},
		{EraModern, "prompts/get", `{"name":"greet","arguments":{}}`, []Header{pv("2026-07-28"), meth("prompts/get"), name("greet")}},
		{EraModern, "resources/read", `{"uri":"file:///a b"}`, []Header{pv("2026-07-28"), meth("resources/read"), name("file:///a b")}},
		{EraModern, "tools/list", `{"name":"ignored"}`, []Header{pv("2026-07-28"), meth("tools/list")}},
		{EraModern, "tools/call", `{"arguments":{}}`, []Header{pv("2026-07-28"), meth("tools/call")}},
		{EraModern, "tools/call", `{"name":5}`, []Header{pv("2026-07-28"), meth("tools/call")}},
		{EraModern, "tools/call", `{"name":"first","name":"last"}`, []Header{pv("2026-07-28"), meth("tools/call"), name("last")}},
		{EraModern, "tools/call", ``, []Header{pv("2026-07-28"), meth("tools/call")}},
		{EraModern, "tools/call", `{"name":`, []Header{pv("2026-07-28"), meth("tools/call")}},
		{EraModern, "tools/call", `{"name":"t\u00f6\u00f6l"}`, []Header{pv("2026-07-28"), meth("tools/call"), name("=?base64?dMO2w7Zs?=")}},
		{EraModern, "tools/call", `{"name":"a\r\nX-Injected: 1"}`, []Header{pv("2026-07-28"), meth("tools/call"), name("=?base64?YQ0KWC1JbmplY3RlZDogMQ==?=")}},
		{EraModern, "tools/call", `{"name":" padded"}`, []Header{pv("2026-07-28"), meth("tools/call"), name("=?base64?IHBhZGRlZA==?=")}},
		{EraModern, "tools/call", `{"name":"=?base64?eA==?="}`, []Header{pv("2026-07-28"), meth("tools/call"), name("=?base64?PT9iYXNlNjQ/ZUE9PT89?=")}},
		{EraModern, "tools/call", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"},"name":"x"}`, []Header{pv("2025-06-18"), meth("tools/call"), name("x")}},
		{EraModern, "tools/call", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"a\nb"},"name":"x"}`, []Header{pv("2026-07-28"), meth("tools/call"), name("x")}},
		{EraModern, "server/discover", `{"_meta":` + fullMeta + `}`, []Header{pv("2026-07-28"), meth("server/discover")}},
		{EraLegacy, "tools/call", `{"name":"x"}`, []Header{pv("2025-11-25")}},
		{EraLegacy20250618, "tools/list", ``, []Header{pv("2025-06-18")}},
		{EraLegacy, "initialize", `{}`, nil},
		{EraLegacy20250326, "tools/call", `{"name":"x"}`, nil},
		{EraLegacy20241105, "tools/call", `{"name":"x"}`, nil},
		{EraAuto, "tools/call", `{"name":"x"}`, nil},
	}
	for _, tc := range tests {
		got := p.Headers(tc.era, tc.method, []byte(tc.params))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Headers(%s, %s, %s) = %v; want %v", tc.era.Version(), tc.method, tc.params, got, tc.want)
		}
	}
}

func TestMCPHandshake(t *testing.T) {
	p := mustNew(t, MCP, Options{ClientName: "load", ClientVersion: "9"})
	if steps := p.Handshake(EraModern); steps != nil {
		t.Errorf("modern handshake = %v; want none", steps)
	}
	for _, era := range []Era{EraLegacy, EraLegacy20250618, EraLegacy20250326, EraLegacy20241105} {
		steps := p.Handshake(era)
		if len(steps) != 2 || steps[0].Method != "initialize" || steps[0].Notification || steps[0].Accept == nil ||
			steps[1].Method != "notifications/initialized" || !steps[1].Notification {
			t.Fatalf("%s handshake = %+v", era.Version(), steps)
		}
		init := decode(t, steps[0].Append(nil, 1, wire.IDInt))
		if got := path(init, "params", "protocolVersion"); got != era.Version() {
			t.Errorf("initialize protocolVersion = %v; want %s", got, era.Version())
		}
		if _, ok := path(init, "params", "capabilities").(map[string]any); !ok {
			t.Errorf("initialize has no capabilities object: %v", init)
		}
		if n, v := path(init, "params", "clientInfo", "name"), path(init, "params", "clientInfo", "version"); n != "load" || v != "9" {
			t.Errorf("clientInfo = %v/%v", n, v)
		}
	}
	for _, era := range []Era{EraNone, EraAuto} {
		if steps := p.Handshake(era); steps != nil {
			t.Errorf("Handshake(%s) = %v; want none", era, steps)
		}
	}
	if s := p.Shutdown(); s != nil {
		t.Errorf("Shutdown = %v; want none (stdio closes stdin)", s)
	}
}

func TestMCPAcceptInitialize(t *testing.T) {
	accept := mustNew(t, MCP, Options{}).Handshake(EraLegacy)[0].Accept
	result := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":` + v + `,"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	}
	tests := []struct {
		reply string
		want  Era
		err   string
	}{
		{result(`"2025-11-25"`), EraLegacy, ""},
		{result(`"2025-06-18"`), EraLegacy20250618, ""},
		{result(`"2025-03-26"`), EraLegacy20250326, ""},
		{result(`"2024-11-05"`), EraLegacy20241105, ""},
		{result(`"2026-07-28"`), EraLegacy, "cannot speak"},
		{result(`"1999-01-01"`), EraLegacy, "cannot speak"},
		{result(`7`), EraLegacy, "no protocolVersion"},
		{`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`, EraLegacy, "no protocolVersion"},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, EraLegacy, "no protocolVersion"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad version"}}`, EraLegacy, "error -32602: bad version"},
	}
	for _, tc := range tests {
		got, err := accept(scan(tc.reply), EraLegacy)
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) || tc.err == "" && err != nil || got != tc.want {
			t.Errorf("Accept(%s) = %s %s, %v; want %s %s, error %q", tc.reply, got, got.Version(), err, tc.want, tc.want.Version(), tc.err)
		}
	}
}

func TestMCPCancel(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	for _, id := range []string{`7`, `"7"`} {
		got := p.Cancel([]byte("x"), []byte(id))
		want := "x" + string(wire.AppendNotification(nil, []byte(`"notifications/cancelled"`), []byte(`{"requestId":`+id+`,"reason":"timeout"}`)))
		if string(got) != want {
			t.Errorf("Cancel(%s) = %s; want %s", id, got, want)
		}
	}
	if got := p.Cancel([]byte("x"), nil); string(got) != "x" {
		t.Errorf("Cancel(no id) = %s", got)
	}
	buf, id := make([]byte, 0, 128), []byte("12345")
	if a := testing.AllocsPerRun(100, func() { buf = p.Cancel(buf[:0], id) }); a != 0 {
		t.Errorf("Cancel allocates %v times", a)
	}
}

func TestMCPAnswerServerRequest(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	tests := []struct{ msg, want string }{
		{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, `{"jsonrpc":"2.0","id":3,"result":{}}`},
		{`{"jsonrpc":"2.0","id":"p","method":"ping","params":{}}`, `{"jsonrpc":"2.0","id":"p","result":{}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"roots/list"}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"elicitation/create","params":{}}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"method not found"}}`},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: bad id"}}`},
		{`{"jsonrpc":"2.0","id":8,"method":5}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"invalid request: method is not a string"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, ``},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, ``},
		{`not json`, ``},
	}
	for _, tc := range tests {
		got := p.AnswerServerRequest([]byte("pre:"), scan(tc.msg))
		if string(got) != "pre:"+tc.want {
			t.Errorf("AnswerServerRequest(%s) = %s; want pre:%s", tc.msg, got, tc.want)
		}
	}
}

func TestMCPProbe(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	s, ok := p.Probe()
	if !ok || s.Method != "server/discover" || s.Notification || s.Accept == nil {
		t.Fatalf("Probe() = %+v, %v", s, ok)
	}
	if !bytes.Contains(s.Params, []byte(metaPV)) {
		t.Errorf("probe params %s lack the modern _meta", s.Params)
	}
	for reply, want := range map[string]Era{
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"]}}`: EraModern,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}`:                       EraModern,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}`:                    EraLegacy,
	} {
		if got, err := s.Accept(scan(reply), EraAuto); got != want || err != nil {
			t.Errorf("probe Accept(%s) = %s, %v; want %s", reply, got, err, want)
		}
	}
	if got, err := s.Accept(scan(`{"jsonrpc":"2.0","method":"notifications/message"}`), EraAuto); got != EraAuto || err == nil {
		t.Errorf("probe Accept(notification) = %s, %v; want auto and an error", got, err)
	}
}
