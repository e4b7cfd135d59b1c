package testsrv

// What the MCP and LSP modes share: the Profile option, the hook into
// stream connections, the decoding of one inbound message, replies written
// from the reader or from a timer, cancellable slow requests, and the
// counters tests read. The plain JSON-RPC path never reaches this file.

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// Profile selects the protocol the server speaks on stream connections (and
// on /mcp over HTTP). The values are what `rpcload serve --profile` accepts.
type Profile string

// The profiles the server speaks.
const (
	ProfileJSONRPC Profile = "jsonrpc" // plain JSON-RPC 2.0 (also ""): the methods of the package doc
	ProfileMCP     Profile = "mcp"     // Model Context Protocol, eras per Config.MCPEra (mcp.go)
	ProfileLSP     Profile = "lsp"     // Language Server Protocol 3.17 (lsp.go)
)

// ParseProfile reads a --profile value; "" is ProfileJSONRPC. Errors wrap
// ErrConfig.
func ParseProfile(name string) (Profile, error) {
	switch p := Profile(name); p {
	case "", ProfileJSONRPC:
		return ProfileJSONRPC, nil
	case ProfileMCP, ProfileLSP:
		return p, nil
	}
	return "", fmt.Errorf("%w: unknown profile %q (valid: jsonrpc, mcp, lsp)", ErrConfig, name)
}

// checkProtoConfig validates the protocol fields of cfg and fills defaults.
// Faults and stalls are refused outside plain JSON-RPC: the protocol modes
// do not implement them, and silently ignoring them would make a test
// believe it injected something.
func checkProtoConfig(cfg *Config) error {
	p, err := ParseProfile(string(cfg.Profile))
	if err != nil {
		return err
	}
	cfg.Profile = p
	if cfg.MCPEra, err = ParseMCPEra(string(cfg.MCPEra)); err != nil {
		return err
	}
	if cfg.MCPResponse, err = ParseMCPResponse(string(cfg.MCPResponse)); err != nil {
		return err
	}
	switch {
	case p == ProfileJSONRPC && cfg.ServerMessages:
		return fmt.Errorf("%w: ServerMessages needs profile mcp or lsp", ErrConfig)
	case p != ProfileJSONRPC && len(cfg.Faults) > 0:
		return fmt.Errorf("%w: faults are only injected by the jsonrpc profile, not %s", ErrConfig, p)
	case p != ProfileJSONRPC && cfg.Stall.For > 0:
		return fmt.Errorf("%w: a stall is only supported by the jsonrpc profile, not %s", ErrConfig, p)
	}
	return nil
}

// protoConn is the protocol state of one stream connection. frame runs on
// the connection's reader goroutine; stop runs once the connection is gone
// and cancels what is still scheduled.
type protoConn interface {
	frame(frame []byte)
	stop()
}

// newProtoConn returns the protocol state for a new stream connection, or
// nil in plain JSON-RPC mode.
func (s *Server) newProtoConn(c *streamConn) protoConn {
	switch s.cfg.Profile {
	case ProfileMCP:
		return newMCPConn(c)
	case ProfileLSP:
		return newLSPConn(c)
	}
	return nil
}

// sendSync queues msg (one JSON message) from the reader goroutine; the
// reader hands it to the writer after the frame, like every plain reply.
func (c *streamConn) sendSync(msg []byte) {
	dst, start := c.beginFrame(c.local)
	c.local = c.endFrame(append(dst, msg...), start)
}

// sendAsync queues msg from any other goroutine (a timer). It is dropped
// once the connection stopped accepting output.
func (c *streamConn) sendAsync(msg []byte) {
	c.mu.Lock()
	if !c.quiet {
		dst, start := c.beginFrame(c.out)
		c.out = c.endFrame(append(dst, msg...), start)
	}
	c.mu.Unlock()
	c.signal()
}

// closeAfterReplies makes the connection close once the replies queued so far
// are written, and stops reading (LSP exit).
func (c *streamConn) closeAfterReplies() {
	c.flushLocal()
	c.requestClose(0)
	c.stopRead.Store(true)
}

// inMsg is one inbound message, scanned by wire.Scan and copied out of the
// read buffer, so it may outlive the frame (timers, other goroutines).
type inMsg struct {
	kind     wire.Kind
	problems wire.Problem
	idKind   wire.IDKind
	id       []byte // raw JSON id; nil when absent
	method   string // decoded method name
	params   []byte // raw JSON params; nil when absent
}

// scanIn scans frame into an inMsg.
func scanIn(frame []byte) inMsg {
	var m wire.Message
	wire.Scan(frame, &m)
	in := inMsg{kind: m.Kind, problems: m.Problems, idKind: m.IDKind}
	if m.ID != nil {
		in.id = append([]byte(nil), m.ID...)
	}
	if m.Method != nil {
		name, _ := wire.Unquote(nil, m.Method)
		in.method = string(name)
	}
	if m.Params != nil {
		in.params = append([]byte(nil), m.Params...)
	}
	return in
}

// rpcError is a JSON-RPC error reply in the making. data is raw JSON or nil.
type rpcError struct {
	code int64
	msg  string
	data []byte
}

// errf returns an error with a JSON string as data.
func errf(code int64, msg, format string, a ...any) *rpcError {
	return &rpcError{code: code, msg: msg, data: wire.AppendString(nil, fmt.Sprintf(format, a...))}
}

// Error codes of the protocol modes besides JSON-RPC's own.
const (
	codeHeaderMismatch      = -32020 // MCP 2026-07-28 HeaderMismatchError
	codeUnsupportedVersion  = -32022 // MCP 2026-07-28 UnsupportedProtocolVersionError
	codeServerNotInitialize = -32002 // LSP ServerNotInitialized
	codeRequestCancelled    = -32800 // LSP RequestCancelled
)

// badFrame returns the error for a message that is not a usable request,
// notification or reply, and whether there is one. Both protocols require
// string or integer ids (never null or a fraction) and neither has batches.
func badFrame(in *inMsg) (*rpcError, bool) {
	switch {
	case in.problems&(wire.ProblemInvalidJSON|wire.ProblemInvalidUTF8) != 0:
		return &rpcError{code: wire.CodeParseError, msg: msgParseError}, true
	case in.kind == wire.KindBatch:
		return errf(wire.CodeInvalidRequest, msgInvalidRequest, "batches are not supported by this protocol"), true
	case in.problems&^wire.ProblemExtraMember != 0 || in.kind == wire.KindInvalid:
		return errf(wire.CodeInvalidRequest, msgInvalidRequest, "%s", in.problems.String()), true
	case in.kind == wire.KindRequest && in.idKind != wire.IDNumber && in.idKind != wire.IDString:
		return errf(wire.CodeInvalidRequest, msgInvalidRequest, "request ids must be strings or integers"), true
	}
	return nil, false
}

// replyID is the id an error for in carries: its own when readable.
func replyID(in *inMsg) []byte {
	if in.idKind == wire.IDNumber || in.idKind == wire.IDString {
		return in.id
	}
	return nil
}

// appendReply appends the response to a request with id: the error when e
// is not nil, else result.
func appendReply(dst, id, result []byte, e *rpcError) []byte {
	if e != nil {
		return wire.AppendError(dst, id, e.code, e.msg, e.data)
	}
	return wire.AppendResult(dst, id, result)
}

// tasks holds the slow requests of one connection (sleep), keyed by their
// raw id, so a cancellation can stop one before it answers. Each task counts
// as "spinning" on its connection: the writer does not finish a half-closed
// connection while one is pending, so its reply still goes out.
type tasks struct {
	c       *streamConn
	mu      sync.Mutex
	m       map[string]*time.Timer
	stopped bool
}

// maxTasks bounds the slow requests in flight per connection, so a client
// cannot make the server hold unbounded timers.
const maxTasks = 1 << 16

// start runs fire after d unless the task is cancelled first. It returns
// false, doing nothing, when the id is already in flight, too many tasks
// are, or the connection is gone.
func (ts *tasks) start(id []byte, d time.Duration, fire func()) bool {
	key := string(id)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.stopped || ts.m[key] != nil || len(ts.m) >= maxTasks {
		return false
	}
	c := ts.c
	c.mu.Lock()
	if c.quiet {
		c.mu.Unlock()
		return false
	}
	c.spinning++
	c.mu.Unlock()
	if ts.m == nil {
		ts.m = map[string]*time.Timer{}
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		ts.mu.Lock()
		mine := ts.m[key] == t
		if mine {
			delete(ts.m, key)
		}
		ts.mu.Unlock()
		if mine {
			fire()
			ts.release()
		}
	})
	ts.m[key] = t
	return true
}

// busy reports whether a task with id is in flight.
func (ts *tasks) busy(id []byte) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.m[string(id)] != nil
}

// cancel stops the task with id; false when none is in flight (finished,
// never started, or not a slow request).
func (ts *tasks) cancel(id []byte) bool {
	ts.mu.Lock()
	t := ts.m[string(id)]
	delete(ts.m, string(id))
	ts.mu.Unlock()
	if t == nil {
		return false
	}
	t.Stop()
	ts.release()
	return true
}

// release ends one task's hold on the connection.
func (ts *tasks) release() {
	c := ts.c
	c.mu.Lock()
	c.spinning--
	c.mu.Unlock()
	c.signal()
}

// stopAll stops every timer: the connection is gone.
func (ts *tasks) stopAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.stopped = true
	for _, t := range ts.m {
		t.Stop()
	}
	ts.m = nil
}

// counts is a set of counters by name. Only names from a fixed list are
// used as keys (others are "other"), so a client cannot grow it.
type counts map[string]uint64

func (m counts) clone() map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// known returns name when it is in list, else "other".
func known(name string, list []string) string {
	for _, n := range list {
		if n == name {
			return name
		}
	}
	return "other"
}

// protoState holds the counters of the protocol modes and the MCP HTTP
// sessions. Nothing here is on the plain JSON-RPC path, so one mutex is
// enough.
type protoState struct {
	mu       sync.Mutex
	mcp      MCPStats
	lsp      LSPStats
	sessions map[string]*mcpSession
	changed  chan struct{} // closed and replaced by update when waiting is set
	waiting  bool
}

func (ps *protoState) init() {
	ps.mcp = MCPStats{Requests: map[string]uint64{}, Errors: map[int64]uint64{}, Notifications: map[string]uint64{}}
	ps.lsp = LSPStats{Requests: map[string]uint64{}, Errors: map[int64]uint64{}, Notifications: map[string]uint64{}, ServerRequestAnswers: map[string]uint64{}}
	ps.sessions = map[string]*mcpSession{}
	ps.changed = make(chan struct{})
}

// updateMCP changes the MCP counters under the lock and wakes waiters.
func (ps *protoState) updateMCP(f func(*MCPStats)) {
	ps.mu.Lock()
	f(&ps.mcp)
	ps.wake()
	ps.mu.Unlock()
}

// updateLSP changes the LSP counters under the lock and wakes waiters.
func (ps *protoState) updateLSP(f func(*LSPStats)) {
	ps.mu.Lock()
	f(&ps.lsp)
	ps.wake()
	ps.mu.Unlock()
}

// wake signals a change to WaitMCP and WaitLSP. Callers hold mu.
func (ps *protoState) wake() {
	if ps.waiting {
		close(ps.changed)
		ps.changed = make(chan struct{})
		ps.waiting = false
	}
}

// await returns a channel closed at the next counter change.
func (ps *protoState) await() <-chan struct{} {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.waiting = true
	return ps.changed
}

// wait blocks until cond holds (checked at once and after every counter
// change) or ctx ends.
func (s *Server) wait(ctx context.Context, cond func() bool) error {
	for {
		ch := s.proto.await()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			if cond() {
				return nil
			}
			return fmt.Errorf("testsrv: server closed while waiting: %w", context.Canceled)
		}
	}
}

// WaitMCP blocks until cond returns true for the MCP counters (it is
// checked now and after every change) or ctx ends, so tests can wait for
// the server to have seen something without sleeping.
func (s *Server) WaitMCP(ctx context.Context, cond func(MCPStats) bool) error {
	return s.wait(ctx, func() bool { return cond(s.MCPStats()) })
}

// WaitLSP is WaitMCP for the LSP counters.
func (s *Server) WaitLSP(ctx context.Context, cond func(LSPStats) bool) error {
	return s.wait(ctx, func() bool { return cond(s.LSPStats()) })
}

// headerValue decodes a Streamable HTTP header value that may use the
// =?base64?...?= form of SEP-2243 (for values that are not plain ASCII).
func headerValue(v string) string {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		if b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2]); err == nil {
			return string(b)
		}
	}
	return v
}
