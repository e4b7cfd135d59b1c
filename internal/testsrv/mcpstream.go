package testsrv

// MCP on a byte stream (stdio, TCP, Unix socket; newline framing is MCP's
// own, Content-Length works too). One connection is one session: a dual
// server settles its era on the first request that decides it.

import (
	"bytes"

	"github.com/rpcload/rpcload/internal/wire"
)

// mcpConn is the MCP state of one stream connection. Everything but tasks
// is touched only by the connection's reader goroutine.
type mcpConn struct {
	c     *streamConn
	s     *Server
	tasks tasks

	era         mcpEraState
	initialized bool // legacy: initialize was answered with a result
	notified    bool // legacy: notifications/initialized arrived
	modernSent  bool // modern: the ServerMessages notification went out

	nextID      uint64          // ids of the server's own requests: 1, 2, ...
	outstanding map[string]bool // raw ids of server requests not answered yet
}

func newMCPConn(c *streamConn) *mcpConn {
	m := &mcpConn{c: c, s: c.s, outstanding: map[string]bool{}}
	m.tasks.c = c
	return m
}

func (m *mcpConn) stop() { m.tasks.stopAll() }

func (m *mcpConn) frame(frame []byte) {
	in := scanIn(frame)
	if e, bad := badFrame(&in); bad {
		m.send(&in, "", nil, e)
		return
	}
	switch in.kind {
	case wire.KindResult, wire.KindError:
		m.answer(&in)
	case wire.KindNotification:
		m.notification(&in)
	default:
		m.request(&in)
	}
}

// send writes the reply to in and counts it under method ("" for frames
// that are no request: only the error code is counted).
func (m *mcpConn) send(in *inMsg, method string, result []byte, e *rpcError) {
	m.c.sendSync(appendReply(nil, replyID(in), result, e))
	m.s.countMCPReply(method, e)
}

// answer matches a client reply with the server request it answers.
func (m *mcpConn) answer(in *inMsg) {
	key := string(in.id)
	ok := m.outstanding[key]
	delete(m.outstanding, key)
	m.s.proto.updateMCP(func(st *MCPStats) {
		switch {
		case !ok:
			st.UnknownReplies++
		case in.kind == wire.KindError:
			st.ServerRequestAnswers++
			st.ServerRequestErrors++
		default:
			st.ServerRequestAnswers++
		}
	})
}

func (m *mcpConn) notification(in *inMsg) {
	var cancelled bool
	switch in.method {
	case "notifications/initialized":
		if m.era == eraLegacy && m.initialized && !m.notified {
			m.notified = true
			if m.s.cfg.ServerMessages {
				m.serverMessages(true)
			}
		}
	case "notifications/cancelled":
		if p, ok := objectOf(in.params); ok {
			cancelled = m.tasks.cancel(bytes.TrimSpace(p["requestId"]))
		}
	}
	m.s.proto.updateMCP(func(st *MCPStats) {
		st.Notifications[known(in.method, mcpNotifications)]++
		if in.method == "notifications/cancelled" {
			st.Cancelled++
			if cancelled {
				st.CancelledInFlight++
			}
		}
	})
}

// serverMessages sends the ServerMessages pair: a ping request (legacy
// only: the 2026-07-28 revision has no server-to-client requests) and a
// notifications/message.
func (m *mcpConn) serverMessages(legacy bool) {
	requests := uint64(0)
	if legacy {
		m.nextID++
		m.outstanding[string(wire.AppendID(nil, m.nextID, wire.IDInt))] = true
		m.c.sendSync(mcpPing(m.nextID))
		requests = 1
	}
	m.c.sendSync(mcpLogNote)
	m.s.proto.updateMCP(func(st *MCPStats) {
		st.ServerRequests += requests
		st.ServerNotifications++
	})
}

// request answers one request. The era of an undecided connection comes
// from the request itself: initialize means legacy; server/discover or a
// _meta protocolVersion means modern; a legacy-only server answers every
// other request as a legacy server before initialize would.
func (m *mcpConn) request(in *inMsg) {
	if m.tasks.busy(in.id) {
		// MCP: ids must not repeat while the sender waits on them.
		m.send(in, in.method, nil, errf(wire.CodeInvalidRequest, msgInvalidRequest, "id %s is already in flight", in.id))
		return
	}
	era := m.era
	if era == eraUnknown {
		_, hasMeta := metaVersionOf(in.params)
		switch {
		case in.method == "initialize" && m.s.speaks(eraLegacy):
			era = eraLegacy
		case m.s.speaks(eraModern) && (hasMeta || in.method == "server/discover"):
			era = eraModern
		case in.method == "ping" && m.s.speaks(eraLegacy):
			// Legacy clients may ping before initialize.
			m.send(in, in.method, []byte("{}"), nil)
			return
		case m.s.speaks(eraModern):
			era = eraModern // a modern request missing its _meta: -32602 below
		default:
			era = eraLegacy
		}
	}
	if era == eraLegacy {
		m.legacy(in)
	} else {
		m.modern(in)
	}
}

func (m *mcpConn) legacy(in *inMsg) {
	switch {
	case in.method == "initialize" && m.initialized:
		m.send(in, in.method, nil, errf(wire.CodeInvalidRequest, msgInvalidRequest, "initialize was already answered on this connection"))
	case in.method == "initialize":
		result, _, e := mcpInitialize(in.params)
		if e == nil {
			m.era, m.initialized = eraLegacy, true
			m.s.proto.updateMCP(func(st *MCPStats) { st.Handshakes++; st.LegacyConns++ })
		}
		m.send(in, in.method, result, e)
	case in.method == "server/discover":
		// How a legacy server reacts to the modern era probe, initialized
		// or not: it has no such method.
		m.send(in, in.method, nil, &rpcError{code: wire.CodeMethodNotFound, msg: msgMethodNotFound, data: wire.AppendString(nil, in.method)})
	case !m.initialized && in.method == "ping":
		m.send(in, in.method, []byte("{}"), nil)
	case !m.initialized:
		// -32600 Invalid Request: the request is well-formed but not valid
		// in this state of the session. Not LSP's -32002, which the MCP
		// legacy block used for "resource not found".
		m.send(in, in.method, nil, errf(wire.CodeInvalidRequest, msgInvalidRequest, "not initialized: send initialize first"))
	default:
		m.call(in, eraLegacy)
	}
}

func (m *mcpConn) modern(in *inMsg) {
	if in.method == "initialize" {
		// initialize does not exist in 2026-07-28.
		m.send(in, in.method, nil, &rpcError{code: wire.CodeMethodNotFound, msg: msgMethodNotFound, data: wire.AppendString(nil, in.method)})
		return
	}
	v, e := checkModernMeta(in.params)
	if e == nil && v != MCPVersionModern {
		e = unsupportedVersion(v)
	}
	if e != nil {
		m.send(in, in.method, nil, e)
		return
	}
	if m.era == eraUnknown {
		m.era = eraModern
		m.s.proto.updateMCP(func(st *MCPStats) { st.ModernConns++ })
	}
	if in.method == "server/discover" {
		m.send(in, in.method, discoverResult, nil)
		return
	}
	if in.method == "tools/call" && m.s.cfg.ServerMessages && !m.modernSent {
		m.modernSent = true
		m.serverMessages(false)
	}
	m.call(in, eraModern)
}

// call runs a method; a slow one (sleep) answers from a timer unless
// notifications/cancelled stops it first.
func (m *mcpConn) call(in *inMsg, era mcpEraState) {
	result, e, delay := mcpCall(era, in.method, in.params)
	if delay <= 0 {
		m.send(in, in.method, result, e)
		return
	}
	reply := appendReply(nil, in.id, result, e)
	method := in.method
	if !m.tasks.start(in.id, delay, func() {
		m.s.countMCPReply(method, e) // first: a client that got the reply sees it counted
		m.c.sendAsync(reply)
	}) {
		m.send(in, in.method, nil, errf(wire.CodeInternalError, "Internal error", "too many slow requests in flight"))
	}
}
