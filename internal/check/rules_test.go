package check

import (
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

// envelopeRules are the rules Envelope may return; the others need the
// pending table or the transport and must never come out of it.
var envelopeRules = Set(0).Add(InvalidJSON).Add(BothResultAndError).Add(NoResultOrError).
	Add(BadJSONRPCVersion).Add(BadErrorObject).Add(InvalidEnvelope)

func set(rules ...Rule) Set {
	var s Set
	for _, r := range rules {
		s = s.Add(r)
	}
	return s
}

func (s Set) names() string {
	var n []string
	for r := Rule(0); r < NumRules; r++ {
		if s.Has(r) {
			n = append(n, r.String())
		}
	}
	return "{" + strings.Join(n, ",") + "}"
}

var envelopeTests = []struct {
	name  string
	frame string
	want  Set
}{
	// Correct replies, and requests or notifications a server may send:
	// nothing to judge.
	{"result", `{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}`, 0},
	{"null result", `{"jsonrpc":"2.0","id":"x","result":null}`, 0},
	{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}`, 0},
	{"error with data", `{"jsonrpc":"2.0","id":1,"error":{"code":7,"message":"m","data":{"k":[]}}}`, 0},
	{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, 0},
	{"members in any order, spaces", " {\"result\" : 1 ,\n\"id\":2, \"jsonrpc\":\"2.0\"} ", 0},
	{"escaped member name", `{"jsonrpc":"2.0","\u0069d":1,"result":1}`, 0},
	{"server request", `{"jsonrpc":"2.0","id":9,"method":"workspace/configuration","params":{}}`, 0},
	{"server notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":[1]}`, 0},
	{"notification without params", `{"jsonrpc":"2.0","method":"ping"}`, 0},
	// Checked elsewhere or allowed by the spec: not envelope rules.
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"result":1}`, 0},
	{"huge integer code", `{"jsonrpc":"2.0","id":1,"error":{"code":123456789012345678901234567890,"message":"m"}}`, 0},

	// One row per rule Envelope can return.
	{"not JSON", `{"jsonrpc":"2.0","id":1,"result":`, set(InvalidJSON)},
	{"trailing data", `{"jsonrpc":"2.0","id":1,"result":1} x`, set(InvalidJSON)},
	{"empty frame", ``, set(InvalidJSON)},
	// Nothing else can be judged in a frame that is not JSON, whatever
	// else looks wrong in it.
	{"not JSON, with other faults", `{"jsonrpc":"1.0","result":1,"error":{},`, set(InvalidJSON)},
	{"both result and error", `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, set(BothResultAndError)},
	{"neither result nor error", `{"jsonrpc":"2.0","id":1}`, set(NoResultOrError)},
	{"empty object", `{}`, set(NoResultOrError, BadJSONRPCVersion)},
	{"version missing", `{"id":1,"result":1}`, set(BadJSONRPCVersion)},
	{"version 1.0", `{"jsonrpc":"1.0","id":1,"result":1}`, set(BadJSONRPCVersion)},
	{"version as number", `{"jsonrpc":2.0,"id":1,"result":1}`, set(BadJSONRPCVersion)},
	{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"oops"}`, set(BadErrorObject)},
	{"error code not integer", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, set(BadErrorObject)},
	{"error code a string", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}`, set(BadErrorObject)},
	{"error message missing", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, set(BadErrorObject)},
	{"error extra member", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","x":0}}`, set(BadErrorObject)},
	{"top-level scalar", `42`, set(InvalidEnvelope)},
	{"top-level string", `"reply"`, set(InvalidEnvelope)},
	{"batch with a scalar", `[{"jsonrpc":"2.0","id":1,"result":1},2]`, set(InvalidEnvelope)},
	{"duplicate member", `{"jsonrpc":"2.0","id":1,"result":1,"result":2}`, set(InvalidEnvelope)},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"result":1}`, set(InvalidEnvelope)},
	{"missing id", `{"jsonrpc":"2.0","result":1}`, set(InvalidEnvelope)},
	{"bool id", `{"jsonrpc":"2.0","id":true,"result":1}`, set(InvalidEnvelope)},
	{"object id", `{"jsonrpc":"2.0","id":{},"result":1}`, set(InvalidEnvelope)},
	{"extra member", `{"jsonrpc":"2.0","id":1,"result":1,"x":1}`, set(InvalidEnvelope)},
	{"case matters", `{"jsonrpc":"2.0","ID":1,"result":1}`, set(InvalidEnvelope)},
	{"params in a response", `{"jsonrpc":"2.0","id":1,"result":1,"params":[]}`, set(InvalidEnvelope)},
	{"result next to a method", `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, set(InvalidEnvelope)},
	// Several faults in one frame are each counted.
	{"several faults", `{"id":true,"result":1,"error":[],"x":0}`, set(BothResultAndError, BadJSONRPCVersion, BadErrorObject, InvalidEnvelope)},
}

func TestEnvelope(t *testing.T) {
	for _, tc := range envelopeTests {
		t.Run(tc.name, func(t *testing.T) {
			var m wire.Message
			wire.Scan([]byte(tc.frame), &m)
			got := Envelope(&m)
			if got != tc.want {
				t.Errorf("Envelope(%s) = %s; want %s (problems %s)", tc.frame, got.names(), tc.want.names(), m.Problems)
			}
		})
	}
}

// TestEnvelopeCoversRules checks that the table above has a row for every
// rule Envelope can return, so a rule added later gets a test.
func TestEnvelopeCoversRules(t *testing.T) {
	var seen Set
	for _, tc := range envelopeTests {
		seen |= tc.want
	}
	if seen != envelopeRules {
		t.Errorf("rows cover %s; Envelope can return %s", seen.names(), envelopeRules.names())
	}
}

func TestRuleNames(t *testing.T) {
	seen := map[string]Rule{}
	for r := Rule(0); r < NumRules; r++ {
		name := r.String()
		if name == "" || name == "rule(?)" || strings.ToLower(name) != name || strings.ContainsAny(name, " -") {
			t.Errorf("rule %d has name %q; want a snake_case id", r, name)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("rules %d and %d share the name %q", prev, r, name)
		}
		seen[name] = r
		back, ok := ParseRule(name)
		if !ok || back != r {
			t.Errorf("ParseRule(%q) = %d, %v; want %d, true", name, back, ok, r)
		}
	}
	// Names are an output contract: pin a few.
	for name, r := range map[string]Rule{"unknown_id": UnknownID, "invalid_json": InvalidJSON, "frame_too_large": FrameTooLarge} {
		if r.String() != name {
			t.Errorf("%d.String() = %q; want %q", r, r.String(), name)
		}
	}
	for _, r := range []Rule{NumRules, NumRules + 1, 255} {
		if got := r.String(); got != "rule(?)" {
			t.Errorf("Rule(%d).String() = %q; want rule(?)", r, got)
		}
	}
	for _, name := range []string{"", "rule(?)", "Unknown_ID", "unknown_id ", "no_such_rule"} {
		if r, ok := ParseRule(name); ok {
			t.Errorf("ParseRule(%q) = %d, true; want false", name, r)
		}
	}
}

func TestSet(t *testing.T) {
	var s Set
	for r := Rule(0); r < NumRules; r++ {
		if s.Has(r) {
			t.Fatalf("empty set has %s", r)
		}
	}
	s = s.Add(InvalidEnvelope).Add(UnknownID).Add(InvalidEnvelope)
	for r := Rule(0); r < NumRules; r++ {
		want := r == InvalidEnvelope || r == UnknownID
		if s.Has(r) != want {
			t.Errorf("Has(%s) = %v; want %v", r, s.Has(r), want)
		}
	}
	// Add returns a new set; the receiver is a value.
	orig := Set(0)
	_ = orig.Add(FrameTooLarge)
	if orig.Has(FrameTooLarge) {
		t.Error("Add modified its receiver")
	}
	var all Set
	for r := Rule(0); r < NumRules; r++ {
		all = all.Add(r)
	}
	if want := Set(1)<<NumRules - 1; all != want {
		t.Errorf("all rules = %b; want %b (one bit per rule, no overlap)", all, want)
	}
}

// FuzzEnvelope checks Envelope on any frame: it returns only envelope rules,
// InvalidJSON alone or not at all, and nothing for a frame without problems.
func FuzzEnvelope(f *testing.F) {
	for _, tc := range envelopeTests {
		f.Add([]byte(tc.frame))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var m wire.Message
		wire.Scan(frame, &m)
		s := Envelope(&m)
		if s&^envelopeRules != 0 {
			t.Fatalf("Envelope(%q) = %s: not all envelope rules", frame, s.names())
		}
		if s.Has(InvalidJSON) && s != set(InvalidJSON) {
			t.Fatalf("Envelope(%q) = %s: InvalidJSON with others", frame, s.names())
		}
		if s.Has(InvalidJSON) != m.Problems.Has(wire.ProblemInvalidJSON) {
			t.Fatalf("Envelope(%q) = %s for problems %s", frame, s.names(), m.Problems)
		}
		if m.Problems == 0 && s != 0 {
			t.Fatalf("Envelope(%q) = %s for a frame without problems", frame, s.names())
		}
	})
}

func TestMostSevere(t *testing.T) {
	for _, tc := range []struct {
		s    Set
		want Rule
	}{
		{0, NumRules},
		{set(WrongErrorCode), WrongErrorCode},
		{set(WrongErrorCode, BatchExtraReply, BatchMissingReply), BatchMissingReply},
		{set(UnknownID, Crash), Crash},
		{set(UnknownID, Hang), Hang},
		{set(CanaryFailed, UnknownID), CanaryFailed},
		{set(Hang, Crash, CanaryFailed), Crash},
		{set(SlowInput, MCPLegacyCode), MCPLegacyCode},
		{set(SlowInput, WrongErrorCode), WrongErrorCode},
		{set(MCPLegacyCode, MCPBadID), MCPBadID},
	} {
		if got := MostSevere(tc.s); got != tc.want {
			t.Errorf("MostSevere(%s) = %s; want %s", tc.s.names(), got, tc.want)
		}
	}
}

func TestSpecRef(t *testing.T) {
	seen := map[string]bool{}
	for r := Rule(0); r < NumRules; r++ {
		ref := SpecRef(r)
		if ref == "" {
			t.Errorf("rule %s has no spec reference", r)
		}
		seen[ref] = true
	}
	if len(seen) < 20 {
		t.Errorf("only %d distinct references for %d rules", len(seen), NumRules)
	}
	if SpecRef(NumRules) != "" {
		t.Error("SpecRef(NumRules) is not empty")
	}
	for name, want := range map[string]bool{"slow_input": true, "mcp_legacy_code": true, "crash": false, "hang": false,
		"canary_failed": false, "wrong_error_code": false, "unknown_id": false,
		"null_id_unanswered": true, "plain_http_error": true} {
		r, ok := ParseRule(name)
		if !ok {
			t.Fatalf("no rule %s", name)
		}
		if r.Warning() != want {
			t.Errorf("%s.Warning() = %v; want %v", name, r.Warning(), want)
		}
	}
}
