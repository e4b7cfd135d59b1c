package profile

import (
	"errors"
	"fmt"

	"github.com/rpcload/rpcload/internal/wire"
)

// The reserved _meta keys of a modern request (RequestMetaObject in
// schema-2026-07-28.json).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"    // required
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities" // required
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"         // should
)

type mcp struct {
	plain
	era         Era
	clientInfo  []byte   // {"name":...,"version":...}
	metaMembers [][]byte // "key":value for each reserved key, in metaKeys order
	resultTypes []string // accepted resultType values
}

var metaKeys = [...]string{metaProtocolVersion, metaClientCapabilities, metaClientInfo}

func newMCP(era Era, o Options) *mcp {
	p := &mcp{plain: plain{name: MCP}, era: era}
	p.clientInfo = appendImplementation(nil, o.ClientName, o.ClientVersion)
	// clientCapabilities {}: rpcload declares no optional capability (no
	// sampling, roots or elicitation), so a server never needs input from it.
	values := [len(metaKeys)][]byte{wire.AppendString(nil, VersionModern), []byte("{}"), p.clientInfo}
	for i, k := range metaKeys {
		m := wire.AppendString(nil, k)
		m = append(m, ':')
		p.metaMembers = append(p.metaMembers, append(m, values[i]...))
	}
	p.resultTypes = append([]string{"complete", "input_required"}, o.MCPResultTypes...)
	return p
}

// appendImplementation appends an Implementation object (name and version
// are the schema's required members).
func appendImplementation(dst []byte, name, version string) []byte {
	dst = append(dst, `{"name":`...)
	dst = wire.AppendString(dst, name)
	dst = append(dst, `,"version":`...)
	dst = wire.AppendString(dst, version)
	return append(dst, '}')
}

func (p *mcp) Era() Era { return p.era }

// AllowsBatch is false: MCP has no JSON-RPC batching since 2025-06-18
// (protocols.md §2).
func (p *mcp) AllowsBatch() bool { return false }

// Probe is a modern server/discover request: its params carry the full
// _meta, since DiscoverRequest requires params with a RequestMetaObject.
func (p *mcp) Probe() (Step, bool) {
	params, _ := p.Params(EraModern, "server/discover", nil)
	return Step{Method: "server/discover", Params: params, Accept: acceptDiscover}, true
}

func acceptDiscover(m *wire.Message, era Era) (Era, error) {
	if e, ok := DetectFromDiscover(m); ok {
		return e, nil
	}
	return era, errors.New("profile: the reply to server/discover is not a response")
}

// Handshake: nothing in the modern era; initialize then
// notifications/initialized in a legacy one. initialize asks for the era's
// revision, declares no capabilities, and gives clientInfo
// (InitializeRequestParams requires all three).
func (p *mcp) Handshake(era Era) []Step {
	if !era.Legacy() {
		return nil
	}
	params := append([]byte(`{"protocolVersion":`), wire.AppendString(nil, era.Version())...)
	params = append(params, `,"capabilities":{},"clientInfo":`...)
	params = append(params, p.clientInfo...)
	params = append(params, '}')
	return []Step{
		{Method: "initialize", Params: params, Accept: acceptInitialize},
		{Method: "notifications/initialized", Notification: true},
	}
}

// acceptInitialize takes the revision the server chose (InitializeResult's
// protocolVersion) as the connection's era. A revision rpcload does not
// speak is an error: the client must then disconnect.
func acceptInitialize(m *wire.Message, era Era) (Era, error) {
	if err := replyError("initialize", m); err != nil {
		return era, err
	}
	v, ok := stringMember(wire.TrimSpace(m.Result), "protocolVersion")
	if !ok {
		return era, errors.New("profile: the initialize result has no protocolVersion string")
	}
	e, ok := eraOfVersion(v)
	if !ok || !e.Legacy() {
		return era, fmt.Errorf("profile: the server chose MCP revision %q, which a legacy client cannot speak", v)
	}
	return e, nil
}

// replyError returns an error when m is not a result.
func replyError(method string, m *wire.Message) error {
	switch m.Kind {
	case wire.KindResult:
		return nil
	case wire.KindError:
		msg, _ := wire.Unquote(nil, m.ErrMsg)
		return fmt.Errorf("profile: %s failed: error %d: %s", method, m.Code, msg)
	}
	return fmt.Errorf("profile: the reply to %s is not a response (%s)", method, m.Kind)
}

var emptyObject = []byte("{}")

var mcpCancelHead = []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)

// Cancel appends notifications/cancelled {requestId, reason}: the same in
// both eras (CancelledNotificationParams; _meta is optional on
// notifications).
func (p *mcp) Cancel(dst []byte, id []byte) []byte {
	if len(id) == 0 {
		return dst
	}
	dst = append(dst, mcpCancelHead...)
	dst = append(dst, id...)
	return append(dst, `,"reason":"timeout"}}`...)
}

// AnswerServerRequest answers ping with an empty result (legacy servers
// ping their clients) and anything else with -32601: rpcload declares no
// client capability, so sampling/createMessage, roots/list and
// elicitation/create are not available, and modern servers send no
// requests on a stream at all.
func (p *mcp) AnswerServerRequest(dst []byte, m *wire.Message) []byte {
	dst, done := answerMalformed(dst, m)
	if done {
		return dst
	}
	if stringIs(m.Method, "ping") {
		return wire.AppendResult(dst, m.ID, emptyObject)
	}
	return answerNotFound(dst, m)
}
