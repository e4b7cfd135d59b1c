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
//     a request from the server whose id is null, a fraction or exponent
//     number, or not a string or number; a reply whose id is a fraction or
//     exponent number. A reply with id null is left to the JSON-RPC rules
//     (it is how a server answers a frame whose id it could not read).
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
		if m.IDKind == wire.IDNull || m.Problems.Has(wire.ProblemBadID) || m.Problems.Has(wire.ProblemFractionalID) {
			s = s.Add(check.MCPBadID)
		}
		return s
	case wire.KindResult, wire.KindError:
		if m.Problems.Has(wire.ProblemFractionalID) {
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
	it, ok := objectMembers(result)
	if !ok {
		return true
	}
	for {
		k, v, _, ok := it.next()
		if !ok {
			return true
		}
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
}
