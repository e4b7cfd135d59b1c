package profile

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

func TestCheckExchange(t *testing.T) {
	const (
		modernCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		badVersion = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"latest"}}}`
		noMeta     = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}`
		ok         = `{"jsonrpc":"2.0","id":1,"result":{}}`
		e32020     = `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch"}}`
		e32022     = `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported","data":{"requested":"latest","supported":["2026-07-28"]}}}`
		e32022bare = `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}`
		e32600     = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"bad"}}`
	)
	good := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"add"}}
	with := func(key string, vals ...string) http.Header {
		h := good.Clone()
		if vals == nil {
			delete(h, key)
		} else {
			h[key] = vals
		}
		return h
	}
	wrong := check.Set(0).Add(check.WrongErrorCode)
	tests := []struct {
		name   string
		req    string
		header http.Header
		status int
		reply  string // "" for none
		era    Era
		want   check.Set
	}{
		{"headers match", modernCall, good, 200, ok, EraModern, 0},
		{"base64 name matches", modernCall, with("Mcp-Name", "=?base64?YWRk?="), 200, ok, EraModern, 0},
		{"version header differs, answered", modernCall, with("Mcp-Protocol-Version", "2025-11-25"), 200, ok, EraModern, wrong},
		{"version header differs, 400 -32020", modernCall, with("Mcp-Protocol-Version", "2025-11-25"), 400, e32020, EraModern, 0},
		{"version header differs, 400 without a body", modernCall, with("Mcp-Protocol-Version", "2025-11-25"), 400, "", EraModern, 0},
		{"version header differs, 400 -32600", modernCall, with("Mcp-Protocol-Version", "2025-11-25"), 400, e32600, EraModern, wrong},
		{"version header missing", modernCall, with("Mcp-Protocol-Version"), 200, ok, EraModern, wrong},
		{"version header twice", modernCall, with("Mcp-Protocol-Version", "2026-07-28", "2026-07-28"), 200, ok, EraModern, wrong},
		{"method header differs", modernCall, with("Mcp-Method", "tools/list"), 200, ok, EraModern, wrong},
		{"name header differs", modernCall, with("Mcp-Name", "echo"), 400, e32600, EraModern, wrong},
		{"name header differs, 400 -32020", modernCall, with("Mcp-Name", "echo"), 400, e32020, EraModern, 0},
		{"legacy era not judged", modernCall, with("Mcp-Method", "x"), 200, ok, EraLegacy, 0},
		{"no version in the body", noMeta, http.Header{}, 200, ok, EraModern, 0},
		{"version no revision, stream, -32022", badVersion, nil, 0, e32022, EraModern, 0},
		{"version no revision, stream, result", badVersion, nil, 0, ok, EraModern, wrong},
		{"version no revision, stream, -32602 (another params fault found first)", badVersion, nil, 0, strings.Replace(e32600, "-32600", "-32602", 1), EraModern, 0},
		{"version no revision, stream, -32601 (the method may be unknown)", badVersion, nil, 0, strings.Replace(e32600, "-32600", "-32601", 1), EraModern, 0},
		{"headers differ, 400 -32602", modernCall, with("Mcp-Name", "echo"), 400, strings.Replace(e32600, "-32600", "-32602", 1), EraModern, wrong},
		{"version no revision, stream, silence", badVersion, nil, 0, "", EraModern, 0},
		{"version no revision, HTTP 200 -32022", badVersion, http.Header{"Mcp-Protocol-Version": {"latest"}, "Mcp-Method": {"ping"}}, 200, e32022, EraModern, wrong},
		{"version no revision and headers differ, -32020", badVersion, http.Header{"Mcp-Method": {"ping"}}, 400, e32020, EraModern, 0},
		{"-32022 without data", noMeta, nil, 0, e32022bare, EraModern, wrong},
	}
	p, err := New(MCP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var req, rep wire.Message
			wire.Scan([]byte(tc.req), &req)
			x := Exchange{Request: &req, Header: tc.header, Status: tc.status, Era: tc.era}
			if tc.reply != "" {
				wire.Scan([]byte(tc.reply), &rep)
				x.Reply = &rep
			}
			got, note := CheckExchange(p, &x)
			if got != tc.want || (got != 0) != (note != "") {
				t.Fatalf("CheckExchange = %v %q; want %v", got, note, tc.want)
			}
			if got == 0 {
				if a := testing.AllocsPerRun(20, func() { CheckExchange(p, &x) }); a != 0 && !strings.Contains(tc.name, "base64") {
					t.Errorf("%v allocations on a pass", a)
				}
			}
		})
	}
	// Profiles without exchange rules pass everything.
	plainP, _ := New(JSONRPC, Options{})
	var req wire.Message
	wire.Scan([]byte(badVersion), &req)
	if got, note := CheckExchange(plainP, &Exchange{Request: &req, Era: EraModern}); got != 0 || note != "" {
		t.Errorf("jsonrpc: %v %q", got, note)
	}
}
