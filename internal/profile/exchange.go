package profile

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// Exchange is one request as it was sent and what answered it: what the
// rules that judge a reply against its request read (CheckExchange). Check
// sees only the reply; these rules need the request's body and HTTP
// header fields too.
type Exchange struct {
	// Request is the message sent, scanned. Only a request (with an id) is
	// judged; a batch is not (MCP has none).
	Request *wire.Message
	// Header holds the HTTP header fields the request was sent with, keyed
	// canonically as net/http keeps them; nil when it did not go over HTTP.
	Header http.Header
	// Status is the HTTP status of the response; 0 when not over HTTP.
	Status int
	// Reply is the scanned JSON body of the response (the response itself
	// on a stream); nil when there was none (an HTTP error without a JSON
	// body, or silence).
	Reply *wire.Message
	// Era is the era the connection speaks.
	Era Era
}

// ExchangeChecker is implemented by the profiles that have rules judging a
// reply against the request it answers (mcp).
type ExchangeChecker interface {
	// CheckExchange returns the rules x breaks and a note saying how (""
	// when none). It does not allocate when nothing is wrong.
	CheckExchange(x *Exchange) (check.Set, string)
}

// CheckExchange judges x with p's exchange rules, if p has any.
func CheckExchange(p Profile, x *Exchange) (check.Set, string) {
	if c, ok := p.(ExchangeChecker); ok {
		return c.CheckExchange(x)
	}
	return 0, ""
}

// Canonical keys (net/http's spelling) of the modern MCP headers.
const (
	keyProtocolVersion = "Mcp-Protocol-Version"
	keyMethod          = "Mcp-Method"
	keyName            = "Mcp-Name"
)

// CheckExchange holds a modern-era MCP exchange to the rules on what the
// request carries (schema-2026-07-28.json, protocols.md §2); both break
// wrong_error_code, the rule of an input the spec assigns an error code:
//
//   - Over HTTP, a request whose MCP-Protocol-Version header is missing,
//     repeated or not the params._meta protocolVersion, whose Mcp-Method is
//     missing or not its method, or whose Mcp-Name is not params.name
//     (tools/call, prompts/get) or params.uri (resources/read), must get
//     HTTP 400 (HeaderMismatchError: "the response status code MUST be 400
//     Bad Request") and, when the body is a JSON-RPC response, error -32020.
//     Header values in the =?base64?...?= form are compared decoded.
//   - A request whose _meta protocolVersion is no revision date (not
//     YYYY-MM-DD), which no server can support, must get error -32022
//     (UnsupportedProtocolVersionError; 400 over HTTP). When both apply,
//     either code passes: the spec orders no checks. For the same reason
//     any error passes for an unsupported version alone (another fault,
//     an unknown method, other params, may be found first): only a result
//     is sure to be wrong.
//   - Any -32022 error must carry data.requested (a string) and
//     data.supported (an array).
//
// Silence and an HTTP 400 without a JSON body pass: silence is the JSON-RPC
// rules' business, and the status is all the 400 rule asks. A legacy or
// undetected era is not judged: such servers read neither header nor _meta.
func (p *mcp) CheckExchange(x *Exchange) (check.Set, string) {
	if !x.Era.Modern() {
		return 0, ""
	}
	wrong := check.Set(0).Add(check.WrongErrorCode)
	if r := x.Reply; r != nil && r.Kind == wire.KindError && r.HasCode && r.Code == codeUnsupportedProtocolVersion && !versionErrorData(r.ErrData) {
		return wrong, "error -32022 without data.requested (a string) and data.supported (an array)"
	}
	req := x.Request
	if req == nil || req.Kind != wire.KindRequest || req.Problems.Has(wire.ProblemInvalidJSON) {
		return 0, ""
	}
	meta, _ := member(wire.TrimSpace(req.Params), "_meta")
	version, ok := member(wire.TrimSpace(meta), metaProtocolVersion)
	if !ok || len(version) == 0 || version[0] != '"' {
		return 0, "" // no version to check against: -32602 is the params rules' business
	}
	mismatch := x.Header != nil && headerMismatch(x.Header, req, version)
	unsupported := !revisionDate(version)
	if !mismatch && !unsupported {
		return 0, ""
	}
	want := "error -32020 (HeaderMismatchError)"
	switch {
	case mismatch && unsupported:
		want = "error -32020 or -32022"
	case unsupported:
		want = "error -32022 (UnsupportedProtocolVersionError)"
	}
	if x.Header != nil && x.Status != http.StatusBadRequest {
		what := "its MCP headers do not match its body"
		if !mismatch {
			what = "its protocolVersion is no revision"
		}
		return wrong, "a request whose " + what + " got HTTP " + strconv.Itoa(x.Status) + "; want 400 with " + want
	}
	r := x.Reply
	switch {
	case r == nil:
		return 0, ""
	case r.Kind == wire.KindError && r.HasCode && (mismatch && r.Code == codeHeaderMismatch || unsupported && r.Code == codeUnsupportedProtocolVersion):
		return 0, ""
	case !mismatch && r.Kind == wire.KindError && r.HasCode:
		// The version sits in params, and the spec orders no checks: a
		// server that finds another fault first (the reference server
		// checks clientCapabilities before the version; mcp-go looks up
		// the method, and "" names none) answers another error truthfully.
		// Only serving the request is sure to be wrong.
		return 0, ""
	case r.Kind == wire.KindError && r.HasCode:
		return wrong, "answered with error " + strconv.FormatInt(r.Code, 10) + "; want " + want
	case r.Kind == wire.KindResult:
		return wrong, "answered with a result; want " + want
	}
	return 0, "" // not a response: the envelope rules judge it
}

// headerMismatch reports whether the MCP headers h disagree with req,
// whose params._meta protocolVersion is the raw string version.
func headerMismatch(h http.Header, req *wire.Message, version []byte) bool {
	if !headerIs(h, keyProtocolVersion, version) || req.Method == nil || !headerIs(h, keyMethod, req.Method) {
		return true
	}
	field := ""
	switch {
	case stringIs(req.Method, "tools/call"), stringIs(req.Method, "prompts/get"):
		field = "name"
	case stringIs(req.Method, "resources/read"):
		field = "uri"
	}
	if field == "" {
		return false
	}
	v, ok := member(wire.TrimSpace(req.Params), field)
	if !ok || len(v) == 0 || v[0] != '"' {
		return false // no value to name: the header is not required
	}
	return !headerIs(h, keyName, v)
}

// headerIs reports whether h holds key exactly once, with the value of
// the raw JSON string raw (decoded from the =?base64?...?= form first).
func headerIs(h http.Header, key string, raw []byte) bool {
	vs := h[key]
	if len(vs) != 1 {
		return false
	}
	v := vs[0]
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		d, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-len("?=")])
		if err != nil {
			return false
		}
		v = string(d)
	}
	return stringIs(raw, v)
}

// revisionDate reports whether the raw JSON string v reads YYYY-MM-DD, the
// form of every MCP revision.
func revisionDate(v []byte) bool {
	var buf [64]byte
	d, ok := wire.Unquote(buf[:0], v)
	if !ok || len(d) != 10 {
		return false
	}
	for i, c := range d {
		if i == 4 || i == 7 {
			if c != '-' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// versionErrorData reports whether data, the raw data member of a -32022
// error, has a string "requested" and an array "supported".
func versionErrorData(data []byte) bool {
	d := wire.TrimSpace(data)
	req, ok1 := member(d, "requested")
	sup, ok2 := member(d, "supported")
	return ok1 && ok2 && len(req) > 0 && req[0] == '"' && len(sup) > 0 && sup[0] == '['
}
