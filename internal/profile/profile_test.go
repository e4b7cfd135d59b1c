package profile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name Name
		want Name
		era  Era
	}{
		{"", JSONRPC, EraNone},
		{JSONRPC, JSONRPC, EraNone},
		{MCP, MCP, EraAuto},
		{LSP, LSP, EraNone},
		{Eth, Eth, EraNone},
	} {
		p := mustNew(t, tc.name, Options{})
		if p.Name() != tc.want || p.Era() != tc.era {
			t.Errorf("New(%q) = %s era %s; want %s era %s", tc.name, p.Name(), p.Era(), tc.want, tc.era)
		}
	}
	for era, want := range map[string]Era{"auto": EraAuto, "modern": EraModern, "legacy": EraLegacy, "2025-06-18": EraLegacy20250618} {
		if p := mustNew(t, MCP, Options{MCPEra: era}); p.Era() != want {
			t.Errorf("MCPEra %q: Era() = %s", era, p.Era())
		}
	}
	for _, tc := range []struct {
		name Name
		o    Options
		err  string
	}{
		{"grpc", Options{}, `unknown profile "grpc"`},
		{"MCP", Options{}, "unknown profile"},
		{MCP, Options{MCPEra: "newest"}, "unknown MCP era"},
		{LSP, Options{MCPEra: "modern"}, `given to profile "lsp"`},
		{"", Options{MCPEra: "legacy"}, `given to profile "jsonrpc"`},
		{LSP, Options{Workspace: "."}, "absolute"},
	} {
		if _, err := New(tc.name, tc.o); err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "profile: ") {
			t.Errorf("New(%q, %+v) error = %v; want one containing %q", tc.name, tc.o, err, tc.err)
		}
	}
	if got := Names(); len(got) != 4 || got[0] != JSONRPC {
		t.Errorf("Names() = %v", got)
	}
}

// TestPlainProfiles: jsonrpc and eth add nothing.
func TestPlainProfiles(t *testing.T) {
	for _, name := range []Name{JSONRPC, Eth} {
		p := mustNew(t, name, Options{})
		if s, ok := p.Probe(); ok || s.Method != "" {
			t.Errorf("%s Probe = %+v, %v", name, s, ok)
		}
		for _, era := range allEras {
			if h := p.Handshake(era); h != nil {
				t.Errorf("%s Handshake = %v", name, h)
			}
			for _, params := range []string{"", `[1,2]`, `{"a":1}`, `5`, `{"a":`} {
				in := []byte(params)
				if out, err := p.Params(era, "eth_call", in); err != nil || !bytes.Equal(out, in) {
					t.Errorf("%s Params(%s) = %s, %v; want it unchanged", name, params, out, err)
				}
				if h := p.Headers(era, "eth_call", in); h != nil {
					t.Errorf("%s Headers = %v", name, h)
				}
			}
		}
		if s := p.Shutdown(); s != nil {
			t.Errorf("%s Shutdown = %v", name, s)
		}
		if got := p.Cancel([]byte("x"), []byte("7")); string(got) != "x" {
			t.Errorf("%s Cancel = %s; want nothing appended", name, got)
		}
		got := p.AnswerServerRequest(nil, scan(`{"jsonrpc":"2.0","id":"s1","method":"eth_subscription"}`))
		if string(got) != `{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"method not found"}}` {
			t.Errorf("%s AnswerServerRequest = %s", name, got)
		}
		if got := p.AnswerServerRequest([]byte("x"), scan(`{"jsonrpc":"2.0","method":"eth_subscription","params":{}}`)); string(got) != "x" {
			t.Errorf("%s answered a notification: %s", name, got)
		}
	}
}

func TestAllows(t *testing.T) {
	tests := []struct {
		name          Name
		intID, strID  bool
		batch         bool
		cancels       bool
		answersServer bool
	}{
		{JSONRPC, true, true, true, false, true},
		{MCP, true, true, false, true, true},
		{LSP, true, true, true, true, true},
		{Eth, true, false, true, false, true},
	}
	for _, tc := range tests {
		p := mustNew(t, tc.name, Options{})
		if p.AllowsIDFormat(wire.IDInt) != tc.intID || p.AllowsIDFormat(wire.IDQuoted) != tc.strID || p.AllowsBatch() != tc.batch {
			t.Errorf("%s: int ids %v, string ids %v, batches %v; want %v %v %v", tc.name,
				p.AllowsIDFormat(wire.IDInt), p.AllowsIDFormat(wire.IDQuoted), p.AllowsBatch(), tc.intID, tc.strID, tc.batch)
		}
		if got := len(p.Cancel(nil, []byte("1"))) > 0; got != tc.cancels {
			t.Errorf("%s cancels: %v", tc.name, got)
		}
	}
}

func TestStepAppend(t *testing.T) {
	s := Step{Method: "a\"b", Params: []byte(`{"x":1}`)}
	if got := string(s.Append([]byte("p"), 3, wire.IDQuoted)); got != `p{"jsonrpc":"2.0","id":"3","method":"a\"b","params":{"x":1}}` {
		t.Errorf("request step = %s", got)
	}
	s.Notification = true
	if got := string(s.Append(nil, 3, wire.IDInt)); got != `{"jsonrpc":"2.0","method":"a\"b","params":{"x":1}}` {
		t.Errorf("notification step = %s", got)
	}
}
