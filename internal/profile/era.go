package profile

import (
	"fmt"

	"github.com/rpcload/rpcload/internal/wire"
)

// Era is the MCP revision a connection speaks, or a state before one is
// known. Profiles other than mcp have EraNone.
type Era uint8

// The eras. The legacy ones are revisions a server may choose in its reply
// to initialize; EraLegacy is the one rpcload asks for.
const (
	EraNone           Era = iota // the profile has no eras
	EraAuto                      // mcp, not known yet: detect it (Profile.Probe)
	EraModern                    // 2026-07-28: per-request _meta, no handshake, no session
	EraLegacy                    // 2025-11-25: initialize, then notifications/initialized
	EraLegacy20250618            // 2025-06-18, chosen by a server in its initialize reply
	EraLegacy20250326            // 2025-03-26, likewise (no MCP-Protocol-Version header yet)
	EraLegacy20241105            // 2024-11-05, likewise (HTTP+SSE era; no header either)
	numEras
)

// The MCP revisions of the two eras this package is built on.
const (
	VersionModern = "2026-07-28"
	VersionLegacy = "2025-11-25"
)

var eraVersions = [numEras]string{"", "", VersionModern, VersionLegacy, "2025-06-18", "2025-03-26", "2024-11-05"}

// Version returns the MCP revision of the era ("2026-07-28", ...), or "" for
// EraNone, EraAuto and unknown values.
func (e Era) Version() string {
	if e < numEras {
		return eraVersions[e]
	}
	return ""
}

// Modern reports whether e is the modern era.
func (e Era) Modern() bool { return e == EraModern }

// Legacy reports whether e is one of the legacy revisions.
func (e Era) Legacy() bool { return e >= EraLegacy && e < numEras }

// String returns "none", "auto", "modern" or "legacy" (Version tells the
// legacy revisions apart), or "era(N)" for unknown values.
func (e Era) String() string {
	switch {
	case e == EraNone:
		return "none"
	case e == EraAuto:
		return "auto"
	case e.Modern():
		return "modern"
	case e.Legacy():
		return "legacy"
	}
	return fmt.Sprintf("era(%d)", uint8(e))
}

// ParseEra reads an --mcp-era value: "" or "auto" (EraAuto), "modern",
// "legacy", or one of the revision dates rpcload speaks ("2026-07-28",
// "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05").
func ParseEra(s string) (Era, error) {
	switch s {
	case "", "auto":
		return EraAuto, nil
	case "modern":
		return EraModern, nil
	case "legacy":
		return EraLegacy, nil
	}
	if e, ok := eraOfVersion(s); ok {
		return e, nil
	}
	return EraNone, fmt.Errorf("profile: unknown MCP era %q (want auto, modern, legacy or a revision such as %s)", s, VersionLegacy)
}

func eraOfVersion(v string) (Era, bool) {
	for e := EraModern; e < numEras; e++ {
		if eraVersions[e] == v {
			return e, true
		}
	}
	return EraNone, false
}

// Error codes the 2026-07-28 revision defines in its reserved block.
const (
	codeHeaderMismatch             = -32020
	codeMissingRequiredCapability  = -32021
	codeUnsupportedProtocolVersion = -32022
)

// modernCode reports whether code is one of the errors only a modern-era
// server sends (HeaderMismatchError, MissingRequiredClientCapabilityError,
// UnsupportedProtocolVersionError in schema-2026-07-28.json).
func modernCode(code int64) bool {
	return code == codeHeaderMismatch || code == codeMissingRequiredCapability || code == codeUnsupportedProtocolVersion
}

// DetectFromDiscover decides the era from the reply to the server/discover
// probe on a stream (protocols.md §2): a result object (a DiscoverResult:
// server/discover exists only in the modern revision, so a legacy server
// cannot answer it with one) or one of the modern errors -32020, -32021,
// -32022 means EraModern; any other reply means EraLegacy (the error a
// legacy server gives to a method it does not know or to a request before
// initialize; also a result that is not an object, which no modern server
// sends). A server that knows server/discover but lists the versions it
// speaks without 2026-07-28 (DiscoverResult.supportedVersions, or the
// supported list in the data of -32022) is spoken to in the legacy era:
// go-sdk v1.8.0's Streamable HTTP handler answers that way. ok is false when
// m is not a reply at all (not JSON, a batch, a request or notification
// from the server): keep waiting, and treat silence until the timeout as
// EraLegacy.
func DetectFromDiscover(m *wire.Message) (era Era, ok bool) {
	switch m.Kind {
	case wire.KindResult:
		r := wire.TrimSpace(m.Result)
		if len(r) == 0 || r[0] != '{' {
			return EraLegacy, true
		}
		if listed, found := listsVersion(r, "supportedVersions", VersionModern); found && !listed {
			return EraLegacy, true
		}
		return EraModern, true
	case wire.KindError:
		if !m.HasCode || !modernCode(m.Code) {
			return EraLegacy, true
		}
		if m.Code == codeUnsupportedProtocolVersion {
			if listed, found := listsVersion(wire.TrimSpace(m.ErrData), "supported", VersionModern); found && !listed {
				return EraLegacy, true
			}
		}
		return EraModern, true
	}
	return EraNone, false
}

// listsVersion reports whether obj's member name is an array of strings
// (found) and whether it holds version.
func listsVersion(obj []byte, name, version string) (listed, found bool) {
	arr, ok := member(obj, name)
	if !ok || arr[0] != '[' {
		return false, false
	}
	for off := 0; ; {
		elem, next, ok := wire.NextElement(arr, off)
		if !ok {
			return listed, true
		}
		off = next
		if stringIs(wire.TrimSpace(elem), version) {
			listed = true
		}
	}
}

// DetectFromHTTP decides the era from the HTTP reply to the server/discover
// probe POSTed with the modern headers (protocols.md §2). body is the JSON
// reply: for a text/event-stream response, the data of the event carrying
// the response.
//
//   - 2xx: as DetectFromDiscover on the body.
//   - 400 whose body is one of the modern errors -32020, -32021, -32022:
//     EraModern (the revision says those come with status 400).
//   - any other 400, 404, 405, 406, 415 and the other 4xx: EraLegacy, except
//     401, 403, 407 (authentication), 408 and 429 (timeouts and rate
//     limits), which say nothing about the era: ok=false.
//   - anything else (1xx, 3xx, 5xx): ok=false.
func DetectFromHTTP(status int, body []byte) (era Era, ok bool) {
	var m wire.Message
	switch {
	case status >= 200 && status <= 299:
		wire.Scan(body, &m)
		return DetectFromDiscover(&m)
	case status == 401, status == 403, status == 407, status == 408, status == 429:
		return EraNone, false
	case status == 400:
		wire.Scan(body, &m)
		if m.Kind == wire.KindError && m.HasCode && modernCode(m.Code) {
			return EraModern, true
		}
		return EraLegacy, true
	case status >= 400 && status <= 499:
		return EraLegacy, true
	}
	return EraNone, false
}
