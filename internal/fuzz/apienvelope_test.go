package fuzz

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rpcload/rpcload/internal/mutate"
)

// TestAPIToolEnvelope: a tool call's schema judges its arguments alone, so
// a call whose params carry anything else than name, arguments and the
// _meta rpcfuzz sends is not judged. Seen against the go-sdk over HTTP
// (rpcfuzz sends no _meta there): {"name":"echo","_meta":[]} refused with
// -32602 for its _meta was valid_params_rejected, and a call with a
// mutated _meta protocolVersion refused with -32020 (HeaderMismatch, as
// MCP 2026-07-28 wants) was params_error_code.
func TestAPIToolEnvelope(t *testing.T) {
	const (
		meta     = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
		err32602 = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad _meta"}}`
		err32020 = `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch"}}`
		cdBad    = `{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":11,"_meta":0}}`
	)
	call := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, meta, frame, reply, rule string
	}{
		{"no _meta sent, _meta not an object", "", call(`{"name":"search","arguments":{"query":""},"_meta":0}`), err32602, ""},
		{"no _meta sent, a _meta", "", call(`{"name":"search","_meta":{"io.modelcontextprotocol/protocolVersion":"2"}}`), err32020, ""},
		{"no _meta sent, another member", "", call(`{"name":"search","arguments":{"query":""},"task":{}}`), err32602, ""},
		{"no _meta sent, none", "", call(`{"name":"search","arguments":{"query":""}}`), err32602, "valid_params_rejected"},
		{"no _meta sent, none, invalid", "", call(`{"name":"search"}`), err32020, "params_error_code"},
		{"_meta sent, the same", meta, call(`{"_meta":` + meta + `,"name":"search","arguments":{"query":""}}`), err32602, "valid_params_rejected"},
		{"_meta sent, another", meta, call(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2"},"name":"search"}`), err32020, ""},
		{"_meta sent, none", meta, call(`{"name":"search","arguments":{"query":""}}`), err32602, ""},
		{"a plain method: judged as before", meta, cdBad, err32020, "params_error_code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := testAPI(t)
			if tc.meta != "" {
				api.meta = []byte(tc.meta)
			}
			c := frames(tc.frame)
			o := outcome{replies: [][]byte{[]byte(tc.reply)}}
			infos, _ := inspect(c, nil)
			v := judgeExchange(c, infos, &o, nil, api)
			rule := ""
			if v.rules != 0 {
				rule = v.rule.String()
			}
			if rule != tc.rule {
				t.Errorf("rule %q (%s), want %q", rule, v.note, tc.rule)
			}
		})
	}
}

// TestAPIFileMeta: a finding's api.json keeps the _meta of the run's tool
// calls, so that a replay judges the call as the run did.
func TestAPIFileMeta(t *testing.T) {
	const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	api := testAPI(t)
	api.meta = []byte(meta)
	r := &run{api: api}
	var f Finding
	b := r.describeCall(&f, mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":` + meta + `,"name":"search","arguments":{"query":""}}}`)}})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "api.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAPIFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Method != "tool search" || got == nil || string(got.meta) != meta {
		t.Fatalf("method %q, read back %+v", f.Method, got)
	}
}
