package testsrv

// MCP Streamable HTTP on MCPPath: one JSON-RPC message per POST. Modern
// requests (2026-07-28) have no session and carry MCP-Protocol-Version,
// Mcp-Method and (tools/call) Mcp-Name headers that must agree with the
// body; legacy ones (2025-11-25 and older) start with initialize, whose
// answer hands out an Mcp-Session-Id that every later POST carries.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// Streamable HTTP header names (net/http canonicalises what clients send).
const (
	hdrSession  = "Mcp-Session-Id"
	hdrVersion  = "Mcp-Protocol-Version"
	hdrMethod   = "Mcp-Method"
	hdrName     = "Mcp-Name"
	maxSessions = 100_000 // beyond this initialize gets 503: a test server's memory is bounded too
)

// mcpSession is one legacy Streamable HTTP session.
type mcpSession struct {
	version string // the revision initialize settled on

	mu          sync.Mutex
	pingSent    bool                     // ServerMessages: the ping went out (first tools/call over SSE)
	nextID      uint64                   // ids of the server's own requests
	outstanding map[string]bool          // raw ids of server requests not answered yet
	inflight    map[string]chan struct{} // running requests by raw id; closed by notifications/cancelled
}

func (s *Server) serveMCPHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// No GET stream and no DELETE of sessions: the spec lets a server
		// refuse both with 405.
		w.Header()["Allow"] = hdrAllow
		http.Error(w, "testsrv: MCP Streamable HTTP takes POST only", http.StatusMethodNotAllowed)
		return
	}
	if !acceptsMCP(r.Header.Values("Accept")) {
		http.Error(w, "testsrv: Accept must list application/json and text/event-stream", http.StatusNotAcceptable)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "testsrv: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	if r.ContentLength > int64(s.cfg.MaxFrame) {
		writeBody(w, http.StatusRequestEntityTooLarge, tooLargeBody)
		return
	}
	body, err := readBody(r.Body, nil, s.cfg.MaxFrame)
	switch {
	case errors.Is(err, errTooLarge):
		writeBody(w, http.StatusRequestEntityTooLarge, tooLargeBody)
		return
	case err != nil:
		http.Error(w, "testsrv: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.countRequest()
	in := scanIn(body)
	if e, bad := badFrame(&in); bad {
		s.mcpHTTPReply(w, http.StatusBadRequest, &in, "", e)
		return
	}
	sid := r.Header.Get(hdrSession)
	_, hasMeta := metaVersionOf(in.params)
	modernMarks := hasMeta || in.method == "server/discover" || r.Header.Get(hdrMethod) != ""
	switch {
	case in.kind == wire.KindRequest && in.method == "initialize" && s.speaks(eraLegacy):
		s.mcpHTTPInitialize(w, &in)
	case sid != "" && s.speaks(eraLegacy):
		s.mcpHTTPLegacy(w, r, &in, sid)
	case modernMarks && s.speaks(eraModern), !s.speaks(eraLegacy):
		s.mcpHTTPModern(w, r, &in)
	default:
		// A legacy server's answer to anything without a session, including
		// a modern server/discover probe: 400 with an error a modern client
		// does not recognise as modern, so it falls back to initialize.
		s.mcpHTTPReply(w, http.StatusBadRequest, &in, in.method, errf(wire.CodeInvalidRequest, msgInvalidRequest, "missing %s header: send initialize first", hdrSession))
	}
}

// acceptsMCP reports whether the Accept values list both media types a
// Streamable HTTP client must accept.
func acceptsMCP(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json":
				js = true
			case "text/event-stream":
				sse = true
			}
		}
	}
	return js && sse
}

// mcpHTTPReply writes a JSON-RPC reply body to the request in with status
// and counts it (under method when it answers a request).
func (s *Server) mcpHTTPReply(w http.ResponseWriter, status int, in *inMsg, method string, e *rpcError) {
	if in.kind != wire.KindRequest {
		method = ""
	}
	// Counted before the write: a client that read the reply sees it counted.
	s.countMCPReply(method, e)
	writeBody(w, status, appendReply(nil, replyID(in), nil, e))
}

// mcpHTTPInitialize starts a legacy session.
func (s *Server) mcpHTTPInitialize(w http.ResponseWriter, in *inMsg) {
	result, version, e := mcpInitialize(in.params)
	if e != nil {
		s.mcpHTTPReply(w, http.StatusOK, in, in.method, e)
		return
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand does not fail on supported platforms
	sid := hex.EncodeToString(raw[:])
	ps := &s.proto
	ps.mu.Lock()
	full := len(ps.sessions) >= maxSessions
	if !full {
		ps.sessions[sid] = &mcpSession{version: version, outstanding: map[string]bool{}, inflight: map[string]chan struct{}{}}
		ps.mcp.Sessions++
		ps.mcp.Handshakes++
		ps.wake()
	}
	ps.mu.Unlock()
	if full {
		s.mcpHTTPReply(w, http.StatusServiceUnavailable, in, in.method, errf(wire.CodeInternalError, "Internal error", "too many sessions"))
		return
	}
	w.Header().Set(hdrSession, sid)
	s.countMCPReply(in.method, nil)
	writeBody(w, http.StatusOK, wire.AppendResult(nil, in.id, result))
}

// session returns the legacy session sid, or nil.
func (s *Server) session(sid string) *mcpSession {
	s.proto.mu.Lock()
	defer s.proto.mu.Unlock()
	return s.proto.sessions[sid]
}

func (s *Server) mcpHTTPLegacy(w http.ResponseWriter, r *http.Request, in *inMsg, sid string) {
	sess := s.session(sid)
	if sess == nil {
		s.mcpHTTPReply(w, http.StatusNotFound, in, in.method, errf(wire.CodeInvalidRequest, msgInvalidRequest, "unknown session: initialize again"))
		return
	}
	if v := r.Header.Get(hdrVersion); v != "" && v != sess.version {
		s.mcpHTTPReply(w, http.StatusBadRequest, in, in.method, errf(wire.CodeInvalidRequest, msgInvalidRequest, "%s %q is not the session's %q", hdrVersion, v, sess.version))
		return
	}
	switch in.kind {
	case wire.KindResult, wire.KindError:
		sess.mu.Lock()
		ok := sess.outstanding[string(in.id)]
		delete(sess.outstanding, string(in.id))
		sess.mu.Unlock()
		s.proto.updateMCP(func(st *MCPStats) {
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
		w.WriteHeader(http.StatusAccepted)
		return
	case wire.KindNotification:
		s.mcpHTTPNotification(w, in, sess)
		return
	}
	switch in.method {
	case "initialize":
		s.mcpHTTPReply(w, http.StatusBadRequest, in, in.method, errf(wire.CodeInvalidRequest, msgInvalidRequest, "this session is initialized already"))
		return
	case "server/discover":
		s.mcpHTTPReply(w, http.StatusOK, in, in.method, &rpcError{code: wire.CodeMethodNotFound, msg: msgMethodNotFound, data: wire.AppendString(nil, in.method)})
		return
	}
	result, e, delay := mcpCall(eraLegacy, in.method, in.params)
	s.mcpRespond(w, r, in, sess, result, e, delay)
}

// mcpHTTPNotification handles a notification POST: 202, nothing else to say.
func (s *Server) mcpHTTPNotification(w http.ResponseWriter, in *inMsg, sess *mcpSession) {
	cancelled := false
	if in.method == "notifications/cancelled" && sess != nil {
		if p, ok := objectOf(in.params); ok {
			key := strings.TrimSpace(string(p["requestId"]))
			sess.mu.Lock()
			if ch := sess.inflight[key]; ch != nil {
				close(ch)
				delete(sess.inflight, key)
				cancelled = true
			}
			sess.mu.Unlock()
		}
	}
	s.proto.updateMCP(func(st *MCPStats) {
		st.Notifications[known(in.method, mcpNotifications)]++
		if in.method == "notifications/cancelled" {
			st.Cancelled++
			if cancelled {
				st.CancelledInFlight++
			}
		}
	})
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) mcpHTTPModern(w http.ResponseWriter, r *http.Request, in *inMsg) {
	if in.kind != wire.KindRequest {
		// Responses and notifications: accepted (2026-07-28 has no session
		// to cancel in; closing the response stream is the cancellation).
		s.mcpHTTPNotification(w, in, nil)
		return
	}
	if in.method == "initialize" {
		// The legacy handshake does not exist in 2026-07-28: answered as an
		// unknown method before any header is judged, so a legacy client
		// learns the server's era rather than a header complaint.
		s.mcpHTTPReply(w, http.StatusNotFound, in, in.method, &rpcError{code: wire.CodeMethodNotFound, msg: msgMethodNotFound, data: wire.AppendString(nil, in.method)})
		return
	}
	mismatch := func(format string, a ...any) {
		s.proto.updateMCP(func(st *MCPStats) { st.HeaderMismatches++ })
		s.mcpHTTPReply(w, http.StatusBadRequest, in, in.method, errf(codeHeaderMismatch, "Header mismatch", format, a...))
	}
	hv := r.Header.Get(hdrVersion)
	if hv == "" {
		mismatch("missing %s header", hdrVersion)
		return
	}
	v, e := checkModernMeta(in.params)
	if e != nil {
		s.mcpHTTPReply(w, http.StatusBadRequest, in, in.method, e)
		return
	}
	if hv != v {
		mismatch("%s %q does not match params._meta %s %q", hdrVersion, hv, metaVersion, v)
		return
	}
	if v != MCPVersionModern {
		s.mcpHTTPReply(w, http.StatusBadRequest, in, in.method, unsupportedVersion(v))
		return
	}
	if hm := headerValue(r.Header.Get(hdrMethod)); hm != in.method {
		mismatch("%s %q does not match method %q", hdrMethod, hm, in.method)
		return
	}
	if in.method == "tools/call" {
		p, _ := objectOf(in.params)
		if name, ok := stringOf(p["name"]); ok {
			if hn, set := r.Header[hdrName]; !set || headerValue(hn[0]) != name {
				mismatch("%s does not match params.name %q", hdrName, name)
				return
			}
		}
	}
	if in.method == "server/discover" {
		s.countMCPReply(in.method, nil)
		writeBody(w, http.StatusOK, wire.AppendResult(nil, in.id, discoverResult))
		return
	}
	result, e, delay := mcpCall(eraModern, in.method, in.params)
	if e != nil && e.code == wire.CodeMethodNotFound {
		s.mcpHTTPReply(w, http.StatusNotFound, in, in.method, e)
		return
	}
	s.mcpRespond(w, r, in, nil, result, e, delay)
}

// mcpRespond answers a request as JSON or as an SSE stream (see
// MCPResponse), after delay unless the client goes away (counted Aborted)
// or cancels it with notifications/cancelled in its session (then the
// stream ends without a response, or a JSON response is aborted).
func (s *Server) mcpRespond(w http.ResponseWriter, r *http.Request, in *inMsg, sess *mcpSession, result []byte, e *rpcError, delay time.Duration) {
	sse := s.cfg.MCPResponse == MCPResponseSSE || (s.cfg.MCPResponse == MCPResponseAuto && in.method == "tools/call")
	var cancel chan struct{}
	if sess != nil {
		sess.mu.Lock()
		if sess.inflight[string(in.id)] != nil {
			sess.mu.Unlock()
			s.mcpHTTPReply(w, http.StatusOK, in, in.method, errf(wire.CodeInvalidRequest, msgInvalidRequest, "id %s is already in flight", in.id))
			return
		}
		cancel = make(chan struct{})
		sess.inflight[string(in.id)] = cancel
		sess.mu.Unlock()
		defer func() {
			sess.mu.Lock()
			if sess.inflight[string(in.id)] == cancel {
				delete(sess.inflight, string(in.id))
			}
			sess.mu.Unlock()
		}()
	}
	reply := appendReply(nil, in.id, result, e)
	rc := http.NewResponseController(w)
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		events := []byte(": keep-alive\n\n")
		events = appendEvent(events, mcpLogNote)
		notes, requests := uint64(1), uint64(0)
		if sess != nil && s.cfg.ServerMessages && in.method == "tools/call" {
			sess.mu.Lock()
			if !sess.pingSent {
				sess.pingSent = true
				sess.nextID++
				sess.outstanding[string(wire.AppendID(nil, sess.nextID, wire.IDInt))] = true
				events = appendEvent(events, mcpPing(sess.nextID))
				requests = 1
			}
			sess.mu.Unlock()
		}
		s.proto.updateMCP(func(st *MCPStats) { st.ServerNotifications += notes; st.ServerRequests += requests })
		_, _ = w.Write(events)
		_ = rc.Flush()
	}
	if delay > 0 && !s.mcpWait(r, delay, cancel, !sse) {
		return
	}
	s.countMCPReply(in.method, e)
	if sse {
		_, _ = w.Write(appendEvent(nil, reply))
		_ = rc.Flush()
	} else {
		writeBody(w, http.StatusOK, reply)
	}
}

// mcpWait waits d for a slow request; false when there is nothing to
// write: the client left, or the request was cancelled (abort: a JSON
// response that was cancelled is cut off without a response). On Close the
// handler aborts.
func (s *Server) mcpWait(r *http.Request, d time.Duration, cancel chan struct{}, abort bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		s.proto.updateMCP(func(st *MCPStats) { st.Aborted++ })
		return false
	case <-cancel:
		if abort {
			panic(http.ErrAbortHandler)
		}
		return false
	case <-s.done:
		panic(http.ErrAbortHandler)
	}
}

// appendEvent appends one SSE event of type message carrying msg (one line:
// the server's JSON never holds a raw newline).
func appendEvent(dst, msg []byte) []byte {
	dst = append(dst, "event: message\ndata: "...)
	dst = append(dst, msg...)
	return append(dst, '\n', '\n')
}
