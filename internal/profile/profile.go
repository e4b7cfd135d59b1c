package profile

import (
	"fmt"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// Name names a profile, as given to --profile.
type Name string

// The profiles.
const (
	JSONRPC Name = "jsonrpc" // plain JSON-RPC 2.0, the default
	MCP     Name = "mcp"     // Model Context Protocol
	LSP     Name = "lsp"     // Language Server Protocol
	Eth     Name = "eth"     // Ethereum execution clients
)

// Names returns the profile names in the order help text lists them.
func Names() []Name { return []Name{JSONRPC, MCP, LSP, Eth} }

// Options configure a profile. The zero value is valid for every profile.
type Options struct {
	// MCPEra is "auto" (or ""), "modern", "legacy", or a revision date such
	// as "2025-06-18" (see ParseEra). Only the mcp profile accepts anything
	// but "auto" or "".
	MCPEra string
	// MCPResultTypes are extension values of resultType the server
	// advertised; mcp_bad_result_type accepts them besides "complete" and
	// "input_required".
	MCPResultTypes []string
	// ClientName and ClientVersion identify the client in MCP clientInfo and
	// LSP clientInfo. Empty means "rpcload" and "dev".
	ClientName, ClientVersion string
	// Workspace is the LSP workspace: an absolute directory path whose
	// file:// URI becomes rootUri and the one workspace folder. Empty means
	// rootUri null and no workspace folders.
	Workspace string
	// ProcessID is the LSP processId: the pid of the process that started
	// the server. Zero or negative is sent as null (not started by a parent
	// the server should watch).
	ProcessID int
}

// Profile is what one ecosystem adds on top of JSON-RPC. Implementations are
// immutable and safe for concurrent use; every method is pure.
type Profile interface {
	// Name returns the profile's name.
	Name() Name

	// Era returns the era configured in Options: EraNone for profiles
	// without eras, EraAuto when the mcp era must be detected (see Probe),
	// or the forced era.
	Era() Era

	// Probe returns the request that detects the era (mcp only; ok=false
	// otherwise). On a stream, send it and pass its reply to the Step's
	// Accept, which returns the detected era; if no reply comes before the
	// timeout, the era is EraLegacy. Over HTTP, POST it with
	// Headers(EraModern, ...) and give the status and body to
	// DetectFromHTTP instead.
	Probe() (s Step, ok bool)

	// Handshake returns what a new connection must exchange before load, in
	// order, for the given era (nil when there is nothing).
	Handshake(era Era) []Step

	// Params rewrites the params of a call (raw JSON, nil when absent) for
	// the era; it is meant to run once per call template, not per request.
	// It returns params itself when there is nothing to add. mcp in the
	// modern era merges params._meta; mcp params must be an object (or
	// absent) in either era.
	Params(era Era, method string, params []byte) ([]byte, error)

	// Headers returns the extra HTTP headers of a call whose params were
	// already rewritten by Params, in a fixed order (nil when none). Like
	// Params it is meant for call templates.
	Headers(era Era, method string, params []byte) []Header

	// AnswerServerRequest appends to dst the reply the client owes for m,
	// a request the server sent. dst is returned unchanged when m is not a
	// request (notifications and replies get no answer).
	AnswerServerRequest(dst []byte, m *wire.Message) []byte

	// Cancel appends the notification that cancels the request with raw id
	// after it timed out, or returns dst unchanged when the profile has
	// none (jsonrpc, eth). It is for streams: over MCP Streamable HTTP the
	// cancellation is closing the response stream, and Cancel is not used.
	// MCP forbids cancelling initialize; the engine never times out a
	// handshake step into a cancellation.
	Cancel(dst []byte, id []byte) []byte

	// Shutdown returns what to send before closing the connection (nil when
	// nothing: an MCP stdio server is stopped by closing its stdin).
	Shutdown() []Step

	// Check judges a scanned reply, or a request or notification the server
	// sent, against the profile's own rules, for the era the connection
	// speaks. The envelope rules are check.Envelope's job, not this one's.
	// It does not allocate.
	Check(m *wire.Message, era Era) check.Set

	// AllowsIDFormat reports whether the profile lets requests carry ids in
	// format f.
	AllowsIDFormat(f wire.IDFormat) bool

	// AllowsBatch reports whether the profile allows JSON-RPC batches.
	AllowsBatch() bool
}

// Step is one message of a handshake or a shutdown.
type Step struct {
	// Method is the method name (not JSON-encoded).
	Method string
	// Params is raw JSON, or nil for none.
	Params []byte
	// Notification is true when the step is a notification: send it and go
	// on without waiting.
	Notification bool
	// Accept judges the reply to a request step and returns the era the
	// connection speaks from then on (era itself, unless the reply decides
	// or changes it). A non-nil error means the connection cannot be used.
	// nil accepts any reply.
	Accept func(m *wire.Message, era Era) (Era, error)
}

// Append appends the step as a request with counter id n in format f, or as
// a notification. It allocates (handshakes are rare).
func (s Step) Append(dst []byte, n uint64, f wire.IDFormat) []byte {
	method := wire.AppendString(nil, s.Method)
	if s.Notification {
		return wire.AppendNotification(dst, method, s.Params)
	}
	return wire.AppendRequest(dst, n, f, method, s.Params)
}

// Header is one HTTP header field. Headers come as a slice rather than a
// map so that their order, and so the bytes a raw HTTP/1.1 writer sends, is
// fixed.
type Header struct{ Name, Value string }

// New returns the profile called name ("" is jsonrpc) configured by o.
func New(name Name, o Options) (Profile, error) {
	if o.ClientName == "" {
		o.ClientName = "rpcload"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	era, err := ParseEra(o.MCPEra)
	if err != nil {
		return nil, err
	}
	if name != MCP && era != EraAuto {
		return nil, fmt.Errorf("profile: an MCP era (%q) was given to profile %q", o.MCPEra, profileName(name))
	}
	switch name {
	case "", JSONRPC:
		return plain{name: JSONRPC}, nil
	case Eth:
		return plain{name: Eth}, nil
	case MCP:
		return newMCP(era, o), nil
	case LSP:
		return newLSP(o)
	}
	return nil, fmt.Errorf("profile: unknown profile %q (want one of %v)", string(name), Names())
}

func profileName(n Name) Name {
	if n == "" {
		return JSONRPC
	}
	return n
}

// plain is the jsonrpc and eth profiles, and the defaults the others embed.
type plain struct{ name Name }

func (p plain) Name() Name                                          { return p.name }
func (plain) Era() Era                                              { return EraNone }
func (plain) Probe() (Step, bool)                                   { return Step{}, false }
func (plain) Handshake(Era) []Step                                  { return nil }
func (plain) Params(_ Era, _ string, params []byte) ([]byte, error) { return params, nil }
func (plain) Headers(Era, string, []byte) []Header                  { return nil }
func (plain) Cancel(dst []byte, _ []byte) []byte                    { return dst }
func (plain) Shutdown() []Step                                      { return nil }
func (plain) Check(*wire.Message, Era) check.Set                    { return 0 }
func (plain) AllowsBatch() bool                                     { return true }

// AllowsIDFormat: eth takes integer ids only (protocols.md §4: Ethereum
// clients send integers, and the profile models them); use the jsonrpc
// profile to see how a node treats string ids. The others take both.
func (p plain) AllowsIDFormat(f wire.IDFormat) bool { return p.name != Eth || f == wire.IDInt }

func (plain) AnswerServerRequest(dst []byte, m *wire.Message) []byte {
	dst, done := answerMalformed(dst, m)
	if done {
		return dst
	}
	return answerNotFound(dst, m)
}

// answerMalformed handles what every profile answers the same way: nothing
// for a message that is not a request, -32600 for a request whose id or
// method is unusable. done is false when m is a well-formed request.
func answerMalformed(dst []byte, m *wire.Message) (out []byte, done bool) {
	switch {
	case m.Kind != wire.KindRequest:
		return dst, true
	case m.Problems.Has(wire.ProblemBadID):
		// The id is not an id (bool, object, array): JSON-RPC answers an
		// invalid request whose id is unusable with id null.
		return wire.AppendError(dst, nil, wire.CodeInvalidRequest, "invalid request: bad id", nil), true
	case m.Method == nil:
		return wire.AppendError(dst, m.ID, wire.CodeInvalidRequest, "invalid request: method is not a string", nil), true
	}
	return dst, false
}

func answerNotFound(dst []byte, m *wire.Message) []byte {
	return wire.AppendError(dst, m.ID, wire.CodeMethodNotFound, "method not found", nil)
}
