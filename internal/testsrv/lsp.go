package testsrv

// LSP mode: a small language server over any stream framing (LSP's own is
// Content-Length). It keeps the documents a client opens and answers
// documentSymbol, hover and definition from them; it sends the client its
// own requests after initialized and counts the answers.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// LSPStats are exact counts of what the LSP server saw and did, for tests to
// compare with what a client reports. Maps hold non-zero entries only.
type LSPStats struct {
	Requests      map[string]uint64 // requests answered (result or error), by method; unknown methods as "other"
	Errors        map[int64]uint64  // error replies by code
	Notifications map[string]uint64 // notifications received, by method; unknown ones as "other"

	CancelRequests    uint64 // $/cancelRequest received
	CancelledInFlight uint64 // of those, the ones that named a running request (answered -32800)

	ServerRequests       uint64            // requests the server sent the client
	ServerNotifications  uint64            // notifications the server sent the client (window/logMessage)
	ServerRequestAnswers map[string]uint64 // client replies to server requests, by the method of the request
	ServerRequestErrors  uint64            // of those, error replies
	UnknownReplies       uint64            // client replies whose id matched no outstanding server request

	Shutdowns            uint64 // shutdown requests answered with null
	Exits                uint64 // exit notifications (each ends its connection)
	ExitsWithoutShutdown uint64 // of those, the ones not preceded by shutdown (LSP: exit code 1)
}

// LSPStats returns a snapshot of the LSP counters.
func (s *Server) LSPStats() LSPStats {
	s.proto.mu.Lock()
	defer s.proto.mu.Unlock()
	st := s.proto.lsp
	st.Requests = counts(st.Requests).clone()
	st.Notifications = counts(st.Notifications).clone()
	st.ServerRequestAnswers = counts(st.ServerRequestAnswers).clone()
	st.Errors = cloneCodes(st.Errors)
	return st
}

// The method names counted by name in LSPStats; others count as "other".
var (
	lspMethods = []string{"initialize", "shutdown", "sleep", "textDocument/documentSymbol",
		"textDocument/hover", "textDocument/definition"}
	lspNotifications = []string{"initialized", "exit", "$/cancelRequest", "textDocument/didOpen",
		"textDocument/didChange", "textDocument/didClose"}
)

// The server requests sent after initialized.
const (
	lspConfiguration = "workspace/configuration"
	lspProgress      = "window/workDoneProgress/create"
)

// lspState is where a connection is in the LSP lifecycle.
type lspState uint8

const (
	lspNew      lspState = iota // before initialize: requests get -32002
	lspRunning                  // initialize answered
	lspShutDown                 // shutdown answered: requests get -32600
)

// lspResult is the InitializeResult: the features this server implements,
// full document sync (1), and its name.
var lspResult = []byte(`{"capabilities":{"hoverProvider":true,"documentSymbolProvider":true,"definitionProvider":true,"textDocumentSync":1},"serverInfo":` + string(serverInfo) + `}`)

// lspConn is the LSP state of one connection. Everything but tasks is
// touched only by the connection's reader goroutine.
type lspConn struct {
	c     *streamConn
	s     *Server
	tasks tasks

	state     lspState
	announced bool // initialized arrived and the server's own messages went out
	caps      struct{ configuration, workDoneProgress bool }

	nextID      uint64
	outstanding map[string]string // raw id of a server request -> its method
	docs        docs
}

func newLSPConn(c *streamConn) *lspConn {
	l := &lspConn{c: c, s: c.s, outstanding: map[string]string{}}
	l.tasks.c = c
	return l
}

func (l *lspConn) stop() { l.tasks.stopAll() }

func (l *lspConn) frame(frame []byte) {
	in := scanIn(frame)
	if e, bad := badFrame(&in); bad {
		l.send(&in, "", nil, e)
		return
	}
	switch in.kind {
	case wire.KindResult, wire.KindError:
		method, ok := l.outstanding[string(in.id)]
		delete(l.outstanding, string(in.id))
		l.s.proto.updateLSP(func(st *LSPStats) {
			if !ok {
				st.UnknownReplies++
				return
			}
			st.ServerRequestAnswers[method]++
			if in.kind == wire.KindError {
				st.ServerRequestErrors++
			}
		})
	case wire.KindNotification:
		l.notification(&in)
	default:
		l.request(&in)
	}
}

// send writes the reply to in, counted under method ("" for a frame that is
// no request).
func (l *lspConn) send(in *inMsg, method string, result []byte, e *rpcError) {
	l.c.sendSync(appendReply(nil, replyID(in), result, e))
	l.countReply(method, e)
}

func (l *lspConn) countReply(method string, e *rpcError) {
	l.s.proto.updateLSP(func(st *LSPStats) {
		if method != "" {
			st.Requests[known(method, lspMethods)]++
		}
		if e != nil {
			st.Errors[e.code]++
		}
	})
}

func (l *lspConn) notification(in *inMsg) {
	cancelled, exitBad := false, false
	switch {
	case in.method == "exit":
		// exit ends the connection in any state; without shutdown first it
		// is an abnormal exit (a stdio server exits with status 1).
		exitBad = l.state != lspShutDown // the connection is closed below, once counted
	case l.state == lspNew:
		// Before initialize, notifications are dropped (LSP 3.17).
	case in.method == "initialized":
		if !l.announced {
			l.announced = true
			l.announce()
		}
	case in.method == "$/cancelRequest":
		p, _ := objectOf(in.params)
		id := bytes.TrimSpace(p["id"])
		if cancelled = len(id) > 0 && l.tasks.cancel(id); cancelled {
			// The cancelled request still gets its one reply: -32800.
			l.c.sendSync(wire.AppendError(nil, id, codeRequestCancelled, "Request cancelled", nil))
			l.countReply("sleep", &rpcError{code: codeRequestCancelled})
		}
	case l.state == lspRunning:
		l.docs.notify(in.method, in.params)
	}
	l.s.proto.updateLSP(func(st *LSPStats) {
		st.Notifications[known(in.method, lspNotifications)]++
		switch in.method {
		case "$/cancelRequest":
			st.CancelRequests++
			if cancelled {
				st.CancelledInFlight++
			}
		case "exit":
			st.Exits++
			if exitBad {
				st.ExitsWithoutShutdown++
			}
		}
	})
	if in.method == "exit" {
		l.c.closeAfterReplies()
	}
}

// announce sends what a server typically sends once initialized: the
// requests the client declared it can answer (workspace.configuration,
// window.workDoneProgress), then a window/logMessage.
func (l *lspConn) announce() {
	requests := uint64(0)
	if l.caps.configuration {
		l.serverRequest(lspConfiguration, []byte(`{"items":[{"section":"rpcload"}]}`))
		requests++
	}
	if l.caps.workDoneProgress {
		l.serverRequest(lspProgress, []byte(`{"token":"rpcload-testsrv-1"}`))
		requests++
	}
	l.c.sendSync([]byte(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"rpcload reference server ready"}}`))
	l.s.proto.updateLSP(func(st *LSPStats) {
		st.ServerRequests += requests
		st.ServerNotifications++
	})
}

// serverRequest sends a request with the next integer id: the same id
// space a client uses, so a client must tell requests from replies by
// their members, not by the id.
func (l *lspConn) serverRequest(method string, params []byte) {
	l.nextID++
	l.outstanding[strconv.FormatUint(l.nextID, 10)] = method
	l.c.sendSync(wire.AppendRequest(nil, l.nextID, wire.IDInt, wire.AppendString(nil, method), params))
}

func (l *lspConn) request(in *inMsg) {
	switch {
	case l.state == lspShutDown:
		l.send(in, in.method, nil, errf(wire.CodeInvalidRequest, msgInvalidRequest, "the server is shut down; only exit is accepted"))
	case in.method == "initialize" && l.state == lspRunning:
		l.send(in, in.method, nil, errf(wire.CodeInvalidRequest, msgInvalidRequest, "initialize was already answered"))
	case in.method == "initialize":
		e := l.initialize(in.params)
		if e == nil {
			l.state = lspRunning
			l.send(in, in.method, lspResult, nil)
			return
		}
		l.send(in, in.method, nil, e)
	case l.state == lspNew:
		l.send(in, in.method, nil, &rpcError{code: codeServerNotInitialize, msg: "Server not initialized"})
	case l.tasks.busy(in.id):
		l.send(in, in.method, nil, errf(wire.CodeInvalidRequest, msgInvalidRequest, "id %s is already in flight", in.id))
	case in.method == "shutdown":
		l.state = lspShutDown
		l.s.proto.updateLSP(func(st *LSPStats) { st.Shutdowns++ })
		l.send(in, in.method, []byte("null"), nil)
	case in.method == "sleep":
		l.sleep(in)
	default:
		result, e := l.docs.request(in.method, in.params)
		l.send(in, in.method, result, e)
	}
}

// initialize validates InitializeParams: processId (integer or null),
// rootUri (string or null) and capabilities (an object) are required.
func (l *lspConn) initialize(params []byte) *rpcError {
	p, ok := objectOf(params)
	if !ok {
		return errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs params, an object")
	}
	var pid *int64
	if raw, present := p["processId"]; !present || json.Unmarshal(raw, &pid) != nil {
		return errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs processId, an integer or null")
	}
	var root *string
	if raw, present := p["rootUri"]; !present || json.Unmarshal(raw, &root) != nil {
		return errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs rootUri, a string or null")
	}
	var caps struct {
		Workspace struct {
			Configuration bool `json:"configuration"`
		} `json:"workspace"`
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
	}
	if _, ok := objectOf(p["capabilities"]); !ok {
		return errf(wire.CodeInvalidParams, msgInvalidParams, "initialize needs capabilities, an object")
	}
	_ = json.Unmarshal(p["capabilities"], &caps) // other shapes of the members: not declared
	l.caps.configuration, l.caps.workDoneProgress = caps.Workspace.Configuration, caps.Window.WorkDoneProgress
	return nil
}

// sleep {ms} (or [ms]) answers true after ms milliseconds unless
// $/cancelRequest names it first: the slow request cancellation needs.
func (l *lspConn) sleep(in *inMsg) {
	var args [2][]byte
	p := &l.c.p
	p.parts = append(p.parts[:0], part{})
	p.scratch = p.scratch[:0]
	if !p.bind(0, "sleep", in.params, namesSleep, &args) {
		l.send(in, in.method, nil, &rpcError{code: wire.CodeInvalidParams, msg: msgInvalidParams, data: append([]byte(nil), p.value(&p.parts[0])...)})
		return
	}
	d, ok := p.bounded(0, args[0], "ms", maxSleepMS, time.Millisecond)
	if !ok {
		l.send(in, in.method, nil, &rpcError{code: wire.CodeInvalidParams, msg: msgInvalidParams, data: append([]byte(nil), p.value(&p.parts[0])...)})
		return
	}
	reply := wire.AppendResult(nil, in.id, trueJSON)
	if !l.tasks.start(in.id, d, func() {
		l.countReply("sleep", nil) // first: a client that got the reply sees it counted
		l.c.sendAsync(reply)
	}) {
		l.send(in, in.method, nil, errf(wire.CodeInternalError, "Internal error", "too many slow requests in flight"))
	}
}
