package profile

import (
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// Codes the 2026-07-28 revision says a server must not emit (protocols.md
// §2): -32002, an older "resource not found" in the legacy block, and
// -32042, the URL elicitation error of 2025-11-25.
const (
	codeResourceNotFound       = -32002
	codeURLElicitationRequired = -32042
	codeMCPReservedMin         = -32099 // the block the 2026-07-28 revision reserves for the spec
	codeMCPReservedMax         = -32020
	codeMCPLegacyMin           = -32019 // the legacy block: no assumed meaning
	codeMCPLegacyMax           = -32000
)

// Check judges m against the MCP rules:
//
//   - mcp_bad_id (both eras; RequestId is string | integer in both schemas):
//     a request from the server whose id is null, a number with a nonzero
//     fraction, or not a string or number; a reply whose id is a number
//     with a nonzero fraction. The schemas are JSON Schema 2020-12, whose
//     "integer" is any number with a zero fractional part however it is
//     written: 1.0, 1e3 and 1.2123456789012346e+21 (how a float64-based
//     server echoes the integer id 1212345678901234567890) are integers. A
//     reply with id null is left to the JSON-RPC rules (it is how a server
//     answers a frame whose id it could not read).
//   - In the modern era only, for an error code: -32020, -32021, -32022 are
//     fine; -32042 and -32002 break mcp_removed_code; any other code in
//     -32099..-32020 breaks mcp_reserved_code; any other code in
//     -32019..-32000 breaks mcp_legacy_code, a warning. A legacy server's
//     codes are not judged: 2025-11-25 defines -32042 itself and leaves
//     -32099..-32000 to JSON-RPC's implementation-defined server errors.
//   - In the modern era only, for a result object: a resultType that is
//     present and not "complete", "input_required" or one of
//     Options.MCPResultTypes (or not a string) breaks mcp_bad_result_type.
//     An absent resultType means "complete" (Result in
//     schema-2026-07-28.json), and a result that is not an object is not
//     this rule's business.
//
// Unresolved eras (EraAuto) get only the rules of both eras.
func (p *mcp) Check(m *wire.Message, era Era) check.Set {
	var s check.Set
	if m.Problems.Has(wire.ProblemInvalidJSON) {
		return s
	}
	switch m.Kind {
	case wire.KindRequest:
		if m.IDKind == wire.IDNull || m.Problems.Has(wire.ProblemBadID) || fractionalID(m) {
			s = s.Add(check.MCPBadID)
		}
		return s
	case wire.KindResult, wire.KindError:
		if fractionalID(m) {
			s = s.Add(check.MCPBadID)
		}
	default:
		return s
	}
	if !era.Modern() {
		return s
	}
	if m.HasCode {
		if r, bad := modernCodeRule(m.Code); bad {
			s = s.Add(r)
		}
	}
	if m.Kind == wire.KindResult && !p.resultTypeOK(m.Result) {
		s = s.Add(check.MCPBadResultType)
	}
	return s
}

// fractionalID reports whether m's id is a number that is not an integer
// in JSON Schema's sense (a nonzero fractional part), which RequestId's
// "integer" does not admit.
func fractionalID(m *wire.Message) bool {
	return m.Problems.Has(wire.ProblemFractionalID) && !integral(m.ID)
}

// integral reports whether the raw JSON number n has a zero fractional
// part: its significant digits, trailing zeros dropped, all stand before
// the decimal point once the exponent moves it (100e-2 and 1.5e1 are
// integral, 1.5 and 1e-1 are not). It reads the text without converting
// it, so no size or exponent is out of its range.
func integral(n []byte) bool {
	i := 0
	if i < len(n) && n[i] == '-' {
		i++
	}
	// The digits of the integer part and of the fraction count as one run;
	// point is how many of them stand before the decimal point.
	digits, point, lastNonZero := 0, -1, -1
mantissa:
	for ; i < len(n); i++ {
		switch c := n[i]; {
		case c >= '0' && c <= '9':
			if c != '0' {
				lastNonZero = digits
			}
			digits++
		case c == '.' && point < 0:
			point = digits
		default:
			break mantissa
		}
	}
	if digits == 0 {
		return false
	}
	if point < 0 {
		point = digits
	}
	if lastNonZero < 0 {
		return true // zero, however written
	}
	if i < len(n) {
		exp, ok := exponent(n[i:])
		if !ok {
			return false
		}
		point += exp
	}
	// Every significant digit stands before the point.
	return lastNonZero < point
}

// exponent reads an exponent part ("e-3", "E+21"), saturating far beyond
// any digit count a frame can hold.
func exponent(e []byte) (int, bool) {
	if len(e) < 2 || e[0] != 'e' && e[0] != 'E' {
		return 0, false
	}
	e = e[1:]
	neg := e[0] == '-'
	if e[0] == '+' || e[0] == '-' {
		e = e[1:]
	}
	if len(e) == 0 {
		return 0, false
	}
	const limit = 1 << 40
	exp := 0
	for _, c := range e {
		if c < '0' || c > '9' {
			return 0, false
		}
		if exp < limit {
			exp = exp*10 + int(c-'0')
		}
	}
	if neg {
		exp = -exp
	}
	return exp, true
}

// modernCodeRule returns the rule an error code from a modern server breaks.
func modernCodeRule(code int64) (check.Rule, bool) {
	switch {
	case code == codeResourceNotFound || code == codeURLElicitationRequired:
		return check.MCPRemovedCode, true
	case modernCode(code):
		return 0, false
	case code >= codeMCPReservedMin && code <= codeMCPReservedMax:
		return check.MCPReservedCode, true
	case code >= codeMCPLegacyMin && code <= codeMCPLegacyMax:
		return check.MCPLegacyCode, true
	}
	return 0, false
}

// resultTypeOK reports whether every resultType member of result (a
// repeated member is judged at each occurrence) is an accepted string.
func (p *mcp) resultTypeOK(result []byte) bool {
	it, ok := wire.ObjectMembers(result)
	if !ok {
		return true
	}
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		if !stringIs(k, "resultType") {
			continue
		}
		accepted := false
		for _, t := range p.resultTypes {
			if stringIs(v, t) {
				accepted = true
				break
			}
		}
		if !accepted {
			return false
		}
	}
	return true
}
