package fuzztarget

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/wire"
)

// Spec error messages.
const (
	msgParseError     = "Parse error"
	msgInvalidRequest = "Invalid Request"
	msgMethodNotFound = "Method not found"
	msgInvalidParams  = "Invalid params"
)

// Server answers JSON-RPC 2.0 frames, with the bugs it was made with
// planted. It holds no per-connection state and is safe for concurrent use.
type Server struct {
	bugs     Bug
	maxFrame int // MaxFrame; tests lower it to stay fast
	frames   atomic.Uint64
	exit     bool // ExitOnCrash
}

// New returns a server with bugs planted (0 for a correct server).
func New(bugs Bug) *Server { return &Server{bugs: bugs, maxFrame: MaxFrame} }

// ExitOnCrash makes a planted crash over HTTP or TCP end the process (see
// the package documentation) and returns s. Only a server that is a
// process of its own may use it: the crash takes down everything in it.
func (s *Server) ExitOnCrash() *Server {
	s.exit = true
	return s
}

// die ends the process with c as an unrecovered panic on a goroutine of
// its own: net/http recovers the handler's panics, so the handler's own
// would not do.
func die(c Crash) {
	go func() { panic(c) }()
	select {}
}

// Bugs returns the planted bugs.
func (s *Server) Bugs() Bug { return s.bugs }

// Frames returns how many frames the server has been given (a crash or a
// hang counts too).
func (s *Server) Frames() uint64 { return s.frames.Load() }

// Handle answers one frame: the reply, or nil when none is due (a
// notification, a batch of notifications). A planted crash panics with a
// Crash; a planted hang blocks until ctx is done and then returns nil.
func (s *Server) Handle(ctx context.Context, frame []byte) []byte {
	reply, hang := s.answer(frame)
	if hang {
		<-ctx.Done()
		return nil
	}
	return reply
}

// answer computes the reply to frame (nil for none); hang is true for a
// planted hang. Planted crashes panic with Crash.
func (s *Server) answer(frame []byte) (reply []byte, hang bool) {
	s.frames.Add(1)
	top, err := parse(frame, s.bugs)
	if err != nil {
		return errorReply(nil, wire.CodeParseError, msgParseError, err.Error()), false
	}
	raw := frame[wire.SkipSpace(frame, 0):]
	if top != kindArray {
		return s.request(raw)
	}
	elems := items(raw)
	if len(elems) == 0 {
		return errorReply(nil, wire.CodeInvalidRequest, msgInvalidRequest, "empty batch"), false
	}
	if s.bugs&NullBatch != 0 {
		for _, e := range elems {
			if string(e.val) == "null" {
				panic(Crash{NullBatch})
			}
		}
	}
	out := []byte{'['}
	for _, e := range elems {
		r, hang := s.request(e.val)
		if hang {
			return nil, true
		}
		if r != nil {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, r...)
		}
	}
	if len(out) == 1 {
		return nil, false // only notifications
	}
	return append(out, ']'), false
}

// envelope is what a request object holds; a repeated member keeps its last
// value, as encoding/json would.
type envelope struct {
	version, id, method, params *member
	response                    bool   // a result or error member
	dup                         string // the first repeated member name
}

// request answers one request object (the frame, or a batch element).
func (s *Server) request(raw []byte) (reply []byte, hang bool) {
	switch kindOf(raw[0]) {
	case kindObject:
	case kindArray:
		return errorReply(nil, wire.CodeInvalidRequest, msgInvalidRequest, "nested batch"), false
	default:
		return errorReply(nil, wire.CodeInvalidRequest, msgInvalidRequest, "a request must be an object"), false
	}
	members := items(raw)
	var env envelope
	var names nameSet
	for i := range members {
		m := &members[i]
		if !names.add(m.key) && env.dup == "" {
			env.dup = m.key
		}
		switch m.key {
		case "jsonrpc":
			env.version = m
		case "id":
			env.id = m
			if s.bugs&HugeID != 0 && hugeNumber(m.val) {
				panic(Crash{HugeID})
			}
		case "method":
			env.method = m
		case "params":
			env.params = m
		case "result", "error":
			env.response = true
		}
	}
	if s.bugs&Hang != 0 && env.id != nil && string(env.id.val) == "-0" &&
		env.method != nil && string(env.method.val) == `""` {
		return nil, true
	}
	var id []byte // the id echoed in a -32600: readable ones only
	if env.id != nil && (env.id.kind() == kindString || env.id.kind() == kindNumber) {
		id = env.id.val
	}
	if why := env.invalid(); why != "" {
		return errorReply(id, wire.CodeInvalidRequest, msgInvalidRequest, why), false
	}
	if env.id == nil {
		return nil, false // a notification: no reply, whatever the call would do
	}
	return s.call(env.id.val, env.method, env.params), false
}

// invalid returns why env is not a valid request, or "".
func (env *envelope) invalid() string {
	switch {
	case env.dup != "":
		return "duplicate member " + strconv.Quote(env.dup)
	case env.method == nil && env.response:
		return "a response is not a request"
	case env.method == nil:
		return "no method"
	case env.response:
		return "a request cannot carry result or error"
	case env.version == nil || env.version.kind() != kindString || unquote(env.version.val) != "2.0":
		return `jsonrpc must be "2.0"`
	case env.id != nil && env.id.kind() != kindString && env.id.kind() != kindNumber && string(env.id.val) != "null":
		return "id must be a string, a number or null"
	case env.method.kind() != kindString:
		return "method must be a string"
	case env.params != nil && env.params.kind() != kindArray && env.params.kind() != kindObject:
		return "params must be an array or an object"
	}
	return ""
}

// hugeNumber reports the huge_id trigger: an integer outside int64, or a
// number with more than 20 digits before its exponent.
func hugeNumber(raw []byte) bool {
	if kindOf(raw[0]) != kindNumber {
		return false
	}
	digits, integer := 0, true
	for _, c := range raw {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			integer = false
		case c == 'e' || c == 'E':
			return digits > 20
		}
	}
	if digits > 20 {
		return true
	}
	if !integer {
		return false
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err != nil
}

// call runs a valid request's method: MCP's per-request _meta is read
// first (readMeta), then the MCP methods are answered (mcpCall), then the
// plain ones.
func (s *Server) call(id []byte, method, params *member) []byte {
	modern, refusal := readMeta(id, params)
	if refusal != nil {
		return refusal
	}
	name := unquote(method.val)
	if reply, ok := s.mcpCall(id, name, params, modern); ok {
		return reply
	}
	switch name {
	case "rpc.discover":
		return discover(id, params)
	case "countdown":
		return s.countdown(id, params)
	case "echo":
		if params == nil {
			return wire.AppendResult(nil, id, []byte("null"))
		}
		return wire.AppendResult(nil, id, params.val)
	case "add":
		sum, why := add(params)
		if why != "" {
			return errorReply(id, wire.CodeInvalidParams, msgInvalidParams, why)
		}
		return wire.AppendResult(nil, id, sum)
	}
	return wire.AppendError(nil, id, wire.CodeMethodNotFound, msgMethodNotFound, method.val)
}

// add computes a+b from [a,b] or {"a":a,"b":b}: exact while both are
// integers and the sum fits int64, else in float64.
func add(params *member) (sum []byte, why string) {
	const usage = `add takes [a, b] or {"a": a, "b": b}`
	if params == nil {
		return nil, usage
	}
	ms := items(params.val)
	var a, b *member
	if params.kind() == kindArray {
		if len(ms) != 2 {
			return nil, usage
		}
		a, b = &ms[0], &ms[1]
	} else {
		for i := range ms {
			switch {
			case ms[i].key == "a" && a == nil:
				a = &ms[i]
			case ms[i].key == "b" && b == nil:
				b = &ms[i]
			default:
				return nil, usage
			}
		}
		if a == nil || b == nil {
			return nil, usage
		}
	}
	if a.kind() != kindNumber || b.kind() != kindNumber {
		return nil, "a and b must be numbers"
	}
	x, xerr := strconv.ParseInt(string(a.val), 10, 64)
	y, yerr := strconv.ParseInt(string(b.val), 10, 64)
	if r := x + y; xerr == nil && yerr == nil && (x^r)&(y^r) >= 0 {
		return strconv.AppendInt(nil, r, 10), ""
	}
	fx, _ := strconv.ParseFloat(string(a.val), 64)
	fy, _ := strconv.ParseFloat(string(b.val), 64)
	r := fx + fy
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, "the sum is out of range"
	}
	return wire.AppendFloat(nil, r, 64), ""
}

// errorReply encodes an error response with a string as data.
func errorReply(id []byte, code int64, msg, data string) []byte {
	return wire.AppendError(nil, id, code, msg, wire.AppendString(nil, data))
}
