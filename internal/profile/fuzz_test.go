package profile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

var paramSeeds = []string{
	``, `{}`, `[]`, `null`, `5`, `"s"`, `{"a":`, ` { "name" : "x" } `,
	`{"name":"echo","arguments":{"x":[1,{"_meta":2}]}}`,
	`{"_meta":{}}`, `{"_meta":{"progressToken":7}}`, `{"_meta":[]}`, `{"_meta":{},"_meta":{}}`,
	`{"\u005fmeta":{"io.modelcontextprotocol\/protocolVersion":"x"}}`,
	`{"_meta":` + fullMeta + `}`, `{"a":"\"}{","_meta":{"k":"]"}}`, `{"name":"t\u00f6\u00f6l\r\n"}`,
}

// FuzzParams checks, for every profile and era: Params and Headers never
// panic; an mcp result is a JSON object that keeps every member of the
// input (and every member of its _meta) and, in the modern era, carries
// _meta with the two required keys; other profiles and legacy eras return
// the params unchanged; header values are printable ASCII.
func FuzzParams(f *testing.F) {
	for _, s := range paramSeeds {
		f.Add([]byte(s))
	}
	profiles := []Profile{mustNew(f, JSONRPC, Options{}), mustNew(f, MCP, Options{}), mustNew(f, LSP, Options{}), mustNew(f, Eth, Options{})}
	f.Fuzz(func(t *testing.T, params []byte) {
		for _, p := range profiles {
			for _, era := range allEras {
				out, err := p.Params(era, "tools/call", params)
				for _, h := range p.Headers(era, "tools/call", params) {
					for i := 0; i < len(h.Value); i++ {
						if c := h.Value[i]; c < 0x20 || c > 0x7e {
							t.Fatalf("%s header %s = %q for params %q", p.Name(), h.Name, h.Value, params)
						}
					}
				}
				if err != nil {
					if p.Name() != MCP {
						t.Fatalf("%s Params(%q): %v", p.Name(), params, err)
					}
					continue
				}
				if p.Name() != MCP || era.Legacy() {
					if !bytes.Equal(out, params) {
						t.Fatalf("%s %s Params(%q) = %q; want it unchanged", p.Name(), era, params, out)
					}
					if p.Name() == MCP && len(bytes.TrimSpace(params)) > 0 && !json.Valid(params) {
						t.Fatalf("legacy mcp accepted invalid params %q", params)
					}
					continue
				}
				if !era.Modern() {
					t.Fatalf("Params accepted era %s", era)
				}
				checkMerged(t, params, out)
			}
		}
	})
}

// checkMerged checks a modern Params result against its input.
func checkMerged(t *testing.T, in, out []byte) {
	if !json.Valid(out) {
		t.Fatalf("Params(%q) = %q: not JSON", in, out)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("Params(%q) = %q: not an object: %v", in, out, err)
	}
	var gotMeta map[string]json.RawMessage
	if err := json.Unmarshal(got["_meta"], &gotMeta); err != nil {
		t.Fatalf("Params(%q) = %q: _meta not an object: %v", in, out, err)
	}
	for _, k := range []string{metaProtocolVersion, metaClientCapabilities, metaClientInfo} {
		if _, ok := gotMeta[k]; !ok {
			t.Fatalf("Params(%q) = %q: _meta lacks %s", in, out, k)
		}
	}
	var orig map[string]json.RawMessage
	if len(bytes.TrimSpace(in)) > 0 {
		if err := json.Unmarshal(in, &orig); err != nil {
			t.Fatalf("Params accepted %q: %v", in, err)
		}
	}
	for k, v := range orig {
		if k == "_meta" {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil {
				t.Fatalf("Params accepted _meta %s", v)
			}
			for mk, mv := range m {
				if !bytes.Equal(gotMeta[mk], mv) {
					t.Fatalf("Params(%q) = %q: _meta.%s changed", in, out, mk)
				}
			}
			continue
		}
		if !bytes.Equal(got[k], v) {
			t.Fatalf("Params(%q) = %q: member %q changed", in, out, k)
		}
	}
	if len(got) != len(orig)+1-min(len(orig["_meta"]), 1) {
		t.Fatalf("Params(%q) = %q: %d members from %d", in, out, len(got), len(orig))
	}
}

func TestStringIs(t *testing.T) {
	if !stringIs([]byte(`"\u0061bc"`), "abc") || stringIs([]byte(`"abc`), "abc") || stringIs([]byte(`abc`), "abc") {
		t.Error("stringIs")
	}
}

// FuzzServerMessage feeds any frame to Check and AnswerServerRequest of
// every profile: Check returns MCP rules only, for mcp only, and the code
// and resultType rules only in the modern era; an answer is appended
// exactly for a request and is one valid JSON-RPC response to its id.
func FuzzServerMessage(f *testing.F) {
	for _, s := range []string{
		discoverResult, errorReply("-32050"), errorReply("-32002"),
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"x"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"workspace/configuration","params":{"items":[{},{}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"workspace/configuration","params":{"items":5}}`,
		`{"jsonrpc":"2.0","id":4,"method":"window/workDoneProgress/create","params":{}}`,
		`{"jsonrpc":"2.0","id":[],"method":"x"}`, `{"jsonrpc":"2.0","method":"window/logMessage"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}",
	} {
		f.Add([]byte(s))
	}
	profiles := []Profile{mustNew(f, JSONRPC, Options{}), mustNew(f, MCP, Options{}), mustNew(f, LSP, Options{Workspace: "/w"}), mustNew(f, Eth, Options{})}
	mcpRules := rules(check.MCPReservedCode, check.MCPLegacyCode, check.MCPRemovedCode, check.MCPBadResultType, check.MCPBadID)
	modernOnly := rules(check.MCPReservedCode, check.MCPLegacyCode, check.MCPRemovedCode, check.MCPBadResultType)
	f.Fuzz(func(t *testing.T, frame []byte) {
		var m wire.Message
		wire.Scan(frame, &m)
		for _, p := range profiles {
			for _, era := range allEras {
				s := p.Check(&m, era)
				if s&^mcpRules != 0 || p.Name() != MCP && s != 0 || !era.Modern() && s&modernOnly != 0 {
					t.Fatalf("%s Check(%q, %s) = %s", p.Name(), frame, era, names(s))
				}
			}
			out := p.AnswerServerRequest([]byte("x"), &m)
			if m.Kind != wire.KindRequest {
				if string(out) != "x" {
					t.Fatalf("%s answered %q (%s) with %q", p.Name(), frame, m.Kind, out)
				}
				continue
			}
			var r wire.Message
			wire.Scan(out[1:], &r)
			// The id is echoed byte for byte, with whatever it carries.
			inherited := m.Problems & (wire.ProblemInvalidUTF8 | wire.ProblemFractionalID)
			if r.Kind != wire.KindResult && r.Kind != wire.KindError || r.Problems&^inherited != 0 {
				t.Fatalf("%s answered %q with %q (%s, %s)", p.Name(), frame, out[1:], r.Kind, r.Problems)
			}
			if !m.Problems.Has(wire.ProblemBadID) && !bytes.Equal(r.ID, m.ID) {
				t.Fatalf("%s answered id %s with id %s", p.Name(), m.ID, r.ID)
			}
		}
	})
}

// TestReadersTruncated runs the readers over every prefix of valid objects.
// Their callers only pass JSON wire.Scan accepted, so a prefix never reaches
// them; this pins that one would still stay in bounds, and that a string cut
// short is never taken for a string.
func TestReadersTruncated(t *testing.T) {
	for _, obj := range []string{
		`{"protocolVersion":"2025-03-26","supportedVersions":["2025-11-25",{"x":"]"}],"_meta":{"a\"b":[1,{}]}}`,
		` { "requested" : "1" , "supported" : [ "2" ] } `,
	} {
		for n := range len(obj) {
			p := []byte(obj[:n])
			for _, name := range []string{"protocolVersion", "supportedVersions", "_meta", "requested", "supported"} {
				if v, ok := stringMember(p, name); ok && !strings.Contains(obj, `"`+v+`"`) {
					t.Errorf("stringMember(%q, %q) = %q from a cut string", p, name, v)
				}
				member(p, name)
				listsVersion(p, name, VersionModern)
			}
			versionErrorData(p)
		}
	}
}
