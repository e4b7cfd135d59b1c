package profile

import (
	"bytes"
	"net/http"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// FuzzRules is what a profile changes in how a fuzzer judges the replies to
// an input: whether the protocol has batches, which methods start or end a
// session, which requests a cancellation lets go unanswered, and the
// profile's own rules. Both fuzzers read it: the black-box engine
// (internal/fuzz) and the native harness (rpcfuzz). A nil *FuzzRules is
// plain JSON-RPC. Its methods do not allocate unless they return something
// found (Cancels).
type FuzzRules struct {
	p           Profile
	era         func() Era
	noBatches   bool            // MCP, LSP: an array is an invalid request, answered with one -32600 error
	cancelOmits bool            // MCP: a request cancelled later in the input may go unanswered
	checks      bool            // the profile has rules of its own on a reply (Check)
	lifecycle   map[string]bool // methods that start or end a session (initialize, shutdown, exit)
	handshake   map[string]bool // the methods of the handshake (initialize, initialized)
	ends        map[string]bool // methods that end a session (shutdown, exit)
}

// NewFuzzRules returns p's fuzz rules. era reports the era the target
// speaks when a reply is judged (a fuzzer detects it on its first
// connection, after the rules are made); nil means p.Era().
func NewFuzzRules(p Profile, era func() Era) *FuzzRules {
	if era == nil {
		era = p.Era
	}
	// LSP's base protocol has no batches either, though rpcload's load
	// may send them to an LSP server (AllowsBatch): a fuzzer judges the
	// protocol, a load run what the user asked for.
	r := &FuzzRules{p: p, era: era, noBatches: p.Name() == MCP || p.Name() == LSP, cancelOmits: p.Name() == MCP,
		checks: p.Name() != JSONRPC && p.Name() != Eth}
	// A session may start in either era; the handshake of each starts one.
	var steps []Step
	for _, e := range []Era{EraLegacy, EraModern} {
		steps = append(steps, p.Handshake(e)...)
	}
	for _, st := range steps {
		if r.handshake == nil {
			r.handshake = map[string]bool{}
		}
		r.handshake[st.Method] = true
	}
	for _, st := range p.Shutdown() {
		if r.ends == nil {
			r.ends = map[string]bool{}
		}
		r.ends[st.Method] = true
		steps = append(steps, st)
	}
	for _, st := range steps {
		if r.lifecycle == nil {
			r.lifecycle = map[string]bool{}
		}
		r.lifecycle[st.Method] = true
	}
	return r
}

// NoBatches reports whether the protocol has no batches: an array is then
// an invalid request, answered with a single -32600 error.
func (r *FuzzRules) NoBatches() bool { return r != nil && r.noBatches }

// Lifecycle reports whether method (a raw JSON string, quotes included)
// names a method that starts or ends a session: a connection is not reused
// after it.
func (r *FuzzRules) Lifecycle(method []byte) bool { return r != nil && methodIn(r.lifecycle, method) }

// Handshake reports whether method (a raw JSON string) names a message of
// the profile's handshake (initialize, and MCP's notifications/initialized
// or LSP's initialized): an input that holds one carries its own
// handshake, and a fuzzer sends it on a connection that had none, so that
// the input decides what the server sees before and after it.
func (r *FuzzRules) Handshake(method []byte) bool { return r != nil && methodIn(r.handshake, method) }

// Ends reports whether the protocol has methods that end a session.
func (r *FuzzRules) Ends() bool { return r != nil && len(r.ends) > 0 }

// EndsSession reports whether method (a raw JSON string) names a method
// that ends a session (LSP's shutdown and exit): nothing is owed after it.
func (r *FuzzRules) EndsSession(method []byte) bool { return r != nil && methodIn(r.ends, method) }

// methodIn reports whether the raw JSON string method, decoded, is in set.
func methodIn(set map[string]bool, method []byte) bool {
	if len(set) == 0 || method == nil {
		return false
	}
	var buf [64]byte
	name, ok := wire.Unquote(buf[:0], method)
	return ok && set[string(name)]
}

// HTTPRefusals reports whether the profile's HTTP transport lets a server
// refuse a message with an HTTP error status whose body is no JSON-RPC
// response: MCP's Streamable HTTP does ("MUST return an HTTP error status
// code ... The HTTP response body MAY comprise a JSON-RPC error
// response"), so there a plain 4xx is no deviation (plain_http_error).
func (r *FuzzRules) HTTPRefusals() bool { return r != nil && r.p.Name() == MCP }

// Checks reports whether the profile has rules of its own on a reply
// (Check).
func (r *FuzzRules) Checks() bool { return r != nil && r.checks }

// Check returns the profile's rules the message m breaks, in the era the
// target speaks now.
func (r *FuzzRules) Check(m *wire.Message) check.Set {
	if !r.Checks() {
		return 0
	}
	return r.p.Check(m, r.era())
}

// Exchange judges a single-message input (frames) against its answer with
// the profile's exchange rules (CheckExchange): header holds what the
// request was sent with over HTTP (nil on a stream), status the HTTP status
// (0 on a stream), reply the answer (nil: none, or an HTTP body that is no
// JSON). Inputs of several messages are left to the other rules: which
// answer goes with which request is the pairing's guess, and a rule on the
// pair must not rest on a guess.
func (r *FuzzRules) Exchange(frames [][]byte, header http.Header, status int, reply []byte) (check.Set, string) {
	if r == nil || len(frames) != 1 {
		return 0, ""
	}
	if _, ok := r.p.(ExchangeChecker); !ok {
		return 0, ""
	}
	var req, rep wire.Message
	wire.Scan(frames[0], &req)
	x := Exchange{Request: &req, Header: header, Status: status, Era: r.era()}
	if reply != nil {
		wire.Scan(reply, &rep)
		x.Reply = &rep
	}
	return CheckExchange(r.p, &x)
}

// A Cancel is a cancellation in an input: the raw id it names (requestId
// as written) and the index of its frame.
type Cancel struct {
	ID    []byte
	Frame int
}

// Cancels returns the cancellations among frames after which a request may
// go unanswered (MCP's notifications/cancelled; an LSP request cancelled
// must still be answered, with RequestCancelled). Names are compared
// decoded, as a server reads them; a requestId written twice gives both
// values, since a server may read either. It returns nil when there are
// none.
func (r *FuzzRules) Cancels(frames [][]byte) []Cancel {
	if r == nil || !r.cancelOmits {
		return nil
	}
	var cs []Cancel
	var m wire.Message
	for i, f := range frames {
		wire.Scan(f, &m)
		if m.Kind != wire.KindNotification || !stringIs(m.Method, "notifications/cancelled") {
			continue
		}
		it, ok := wire.ObjectMembers(m.Params)
		if !ok {
			continue
		}
		for name, value, ok := it.Next(); ok; name, value, ok = it.Next() {
			if stringIs(name, "requestId") {
				cs = append(cs, Cancel{ID: value, Frame: i})
			}
		}
	}
	return cs
}

// Cancelled reports whether the request of frame frame, with the raw id
// id, is cancelled by one of cs written after it: a receiver should not
// answer it then. A cancellation before the request names no request the
// receiver knows, so that request is still owed its reply.
func Cancelled(cs []Cancel, frame int, id []byte) bool {
	if id == nil {
		return false
	}
	for _, c := range cs {
		if c.Frame > frame && bytes.Equal(c.ID, id) {
			return true
		}
	}
	return false
}
