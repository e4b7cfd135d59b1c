package profile

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

func names(s check.Set) string {
	var n []string
	for r := check.Rule(0); r < check.NumRules; r++ {
		if s.Has(r) {
			n = append(n, r.String())
		}
	}
	return "{" + strings.Join(n, ",") + "}"
}

func rules(rs ...check.Rule) check.Set {
	var s check.Set
	for _, r := range rs {
		s = s.Add(r)
	}
	return s
}

func TestMCPCheckCodes(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	reserved, legacy, removed := rules(check.MCPReservedCode), rules(check.MCPLegacyCode), rules(check.MCPRemovedCode)
	tests := []struct {
		code   int64
		modern check.Set // legacy eras and EraAuto: never a code rule
	}{
		{-32020, 0}, // HeaderMismatch
		{-32021, 0}, // MissingRequiredClientCapability
		{-32022, 0}, // UnsupportedProtocolVersion
		{-32023, reserved},
		{-32050, reserved},
		{-32099, reserved},
		{-32100, 0}, // JSON-RPC's reserved block, outside MCP's: no MCP rule
		{-32019, legacy},
		{-32001, legacy},
		{-32000, legacy},
		{-31999, 0},
		{-32002, removed}, // an older "resource not found"
		{-32042, removed}, // 2025-11-25's URL elicitation error
		{-32600, 0},
		{-32601, 0},
		{-32602, 0},
		{-32700, 0},
		{-32800, 0},
		{1, 0},
		{0, 0},
	}
	for _, tc := range tests {
		frame := `{"jsonrpc":"2.0","id":1,"error":{"code":` + strconv.FormatInt(tc.code, 10) + `,"message":"m"}}`
		for _, era := range allEras {
			want := check.Set(0)
			if era.Modern() {
				want = tc.modern
			}
			if got := p.Check(scan(frame), era); got != want {
				t.Errorf("Check(code %d, %s %s) = %s; want %s", tc.code, era, era.Version(), names(got), names(want))
			}
		}
	}
	// The code of a reply carrying both result and error is judged too.
	if got := p.Check(scan(`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32050,"message":"m"}}`), EraModern); got != reserved {
		t.Errorf("Check(result and error) = %s", names(got))
	}
}

// TestRuleSeverity pins which rules are warnings: MCP's legacy codes (a
// SHOULD NOT of the profile), rpcfuzz's slow_input (a heuristic), the two
// known deviations rpcfuzz reports without failing (id null left
// unanswered, a parse error refused in plain HTTP), and the four that hold
// a server to its own params schemas, which JSON-RPC does not require it
// to validate; every other rule breaks a MUST.
func TestRuleSeverity(t *testing.T) {
	warnings := []check.Rule{check.MCPLegacyCode, check.SlowInput, check.NullIDUnanswered, check.PlainHTTPError,
		check.InvalidParamsAccepted, check.ParamsErrorCode, check.ValidParamsRejected, check.InternalError}
	for r := check.Rule(0); r < check.NumRules; r++ {
		if r.Warning() != slices.Contains(warnings, r) {
			t.Errorf("%s.Warning() = %v", r, r.Warning())
		}
	}
}

func TestMCPCheckResultType(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	ext := mustNew(t, MCP, Options{MCPResultTypes: []string{"com.example/streaming"}})
	bad := rules(check.MCPBadResultType)
	tests := []struct {
		result string
		modern check.Set
	}{
		{`{"resultType":"complete","content":[]}`, 0},
		{`{"resultType":"input_required","inputRequests":{}}`, 0},
		{`{"content":[]}`, 0}, // absent means complete
		{`{}`, 0},
		{`{"resultType":"compl\u0065te"}`, 0},
		{`{ "resultType" : "complete" }`, 0},
		{`{"a":{"resultType":"nested, not judged"}}`, 0},
		{`null`, 0},
		{`[]`, 0},
		{`"complete"`, 0},
		{`{"resultType":"done"}`, bad},
		{`{"resultType":"Complete"}`, bad},
		{`{"resultType":""}`, bad},
		{`{"resultType":5}`, bad},
		{`{"resultType":null}`, bad},
		{`{"resultType":["complete"]}`, bad},
		{`{"resultType":"com.example/streaming"}`, bad},
		{`{"resultType":"complete","resultType":"other"}`, bad},
	}
	for _, tc := range tests {
		frame := `{"jsonrpc":"2.0","id":1,"result":` + tc.result + `}`
		for _, era := range allEras {
			want := check.Set(0)
			if era.Modern() {
				want = tc.modern
			}
			if got := p.Check(scan(frame), era); got != want {
				t.Errorf("Check(%s, %s) = %s; want %s", tc.result, era, names(got), names(want))
			}
		}
	}
	if got := ext.Check(scan(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"com.example/streaming"}}`), EraModern); got != 0 {
		t.Errorf("advertised extension resultType: %s", names(got))
	}
}

func TestMCPCheckIDs(t *testing.T) {
	p := mustNew(t, MCP, Options{})
	bad := rules(check.MCPBadID)
	tests := []struct {
		frame string
		want  check.Set // in every era
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":-3,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, bad},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, bad},
		{`{"jsonrpc":"2.0","id":1e-3,"method":"ping"}`, bad},
		// JSON Schema 2020-12's "integer": a zero fractional part, however
		// the number is written.
		{`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, bad},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, bad},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, 0},
		{`{"jsonrpc":"2.0","id":2.5,"error":{"code":-32601,"message":"m"}}`, bad},
		{`{"jsonrpc":"2.0","id":1.5e-400,"result":{}}`, bad},
		// Integers beyond float64's exact range, echoed by a float64-based
		// server (mcp-go) in exponent form: integral, not fractional.
		{`{"jsonrpc":"2.0","id":1.2123456789012346e+21,"result":{}}`, 0},
		{`{"jsonrpc":"2.0","id":1e+21,"error":{"code":-32601,"message":"m"}}`, 0},
		{`{"jsonrpc":"2.0","id":9.012345678901235e+21,"error":{"code":-32601,"message":"m"}}`, 0},
		{`{"jsonrpc":"2.0","id":1.0,"result":{"resultType":"complete"}}`, 0},
		{`{"jsonrpc":"2.0","id":-0.0,"result":{}}`, 0},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, 0},
		{`{"jsonrpc":"2.0","id":"x","result":{}}`, 0},
		{`{"jsonrpc":"2.0","id":1.5,"result":`, 0}, // not JSON: the envelope judge's
		{`[{"jsonrpc":"2.0","id":1.5,"result":{}}]`, 0},
	}
	for _, tc := range tests {
		for _, era := range allEras {
			if got := p.Check(scan(tc.frame), era); got != tc.want {
				t.Errorf("Check(%s, %s) = %s; want %s", tc.frame, era, names(got), names(tc.want))
			}
		}
	}
}

func TestIntegral(t *testing.T) {
	for n, want := range map[string]bool{
		"0": true, "-0": true, "7": true, "-12": true, "1.0": true, "1.000": true, "1e3": true, "1E+3": true,
		"100e-2": true, "1.5e1": true, "0.5e1": true, "12.34e2": true, "1.2123456789012346e+21": true,
		"0e-5": true, "0.000e-99999999999999999999": true, "1e99999999999999999999": true, "-1.25e2": true,
		"1.5": false, "0.1": false, "1e-1": false, "10e-2": false, "12.34e1": false, "1.2e-99999999999999999999": false,
		"5e-324": false, "-0.5": false, "": false, "-": false, "1e": false, "1e+": false, "x": false,
	} {
		if got := integral([]byte(n)); got != want {
			t.Errorf("integral(%q) = %v; want %v", n, got, want)
		}
	}
}

func TestCheckOtherProfiles(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"bogus"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1.5,"result":1}`,
	}
	for _, name := range []Name{JSONRPC, LSP, Eth} {
		p := mustNew(t, name, Options{})
		for _, f := range frames {
			for _, era := range allEras {
				if got := p.Check(scan(f), era); got != 0 {
					t.Errorf("%s Check(%s) = %s; want nothing", name, f, names(got))
				}
			}
		}
	}
}

func TestCheckAllocs(t *testing.T) {
	p := mustNew(t, MCP, Options{MCPResultTypes: []string{"x"}})
	frames := []*wire.Message{
		scan(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"input_r\u0065quired"}}`),
		scan(`{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"m"}}`),
		scan(`{"jsonrpc":"2.0","id":null,"method":"ping"}`),
		scan(`{"jsonrpc":"2.0","id":1.2123456789012346e+21,"result":{}}`),
		scan(`{"jsonrpc":"2.0","id":2.5,"method":"ping"}`),
	}
	a := testing.AllocsPerRun(200, func() {
		for _, m := range frames {
			p.Check(m, EraModern)
		}
	})
	if a != 0 {
		t.Errorf("Check allocates %v times per run", a)
	}
}

func BenchmarkMCPCheck(b *testing.B) {
	p, _ := New(MCP, Options{})
	m := scan(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hello world"}],"isError":false,"resultType":"complete"}}`)
	b.ReportAllocs()
	for b.Loop() {
		p.Check(m, EraModern)
	}
}
