package fuzz

import (
	"net/http"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// profileRules is what the profile changes in judging a reply: whether
// the protocol has batches, whether a cancelled request may go unanswered,
// which methods change a connection's state, and the profile's own rules.
// The zero value is plain JSON-RPC.
type profileRules struct {
	noBatches   bool            // MCP, LSP: an array is an invalid request, answered with one -32600 error
	cancelOmits bool            // MCP: a request cancelled later in the input may go unanswered
	lifecycle   map[string]bool // methods that start or end a session (initialize, shutdown, exit)
	check       func(m *wire.Message) check.Set
	// exchange judges a single-message input's request against what
	// answered it (profile.CheckExchange: MCP's header and protocol
	// version rules); nil when the profile has no such rules.
	exchange func(x *profile.Exchange) (check.Set, string)
}

func newProfileRules(d *dialer) *profileRules {
	p := d.prof
	pr := &profileRules{lifecycle: map[string]bool{}}
	switch p.Name() {
	case profile.MCP:
		pr.noBatches, pr.cancelOmits = true, true
	case profile.LSP:
		pr.noBatches = true // LSP's base protocol has no batches
	}
	var steps []profile.Step
	for _, era := range []profile.Era{profile.EraLegacy, profile.EraModern} {
		steps = append(steps, p.Handshake(era)...)
	}
	steps = append(steps, p.Shutdown()...)
	for _, st := range steps {
		pr.lifecycle[st.Method] = true
	}
	if p.Name() != profile.JSONRPC && p.Name() != profile.Eth {
		pr.check = func(m *wire.Message) check.Set { return p.Check(m, profile.Era(d.era.Load())) }
	}
	if _, ok := p.(profile.ExchangeChecker); ok {
		pr.exchange = func(x *profile.Exchange) (check.Set, string) {
			x.Era = profile.Era(d.era.Load())
			return profile.CheckExchange(p, x)
		}
	}
	return pr
}

// exchangeRules judges a single-message input (frame) against its answer
// with the profile's exchange rules: header holds what the request was
// sent with over HTTP (nil on a stream), status the HTTP status (0 on a
// stream), reply the answer (nil: none, or an HTTP body that is no JSON).
// Inputs of several messages are left to the other rules: which answer
// goes with which request is the pairing's guess, and a rule on the pair
// must not rest on a guess.
func (pr *profileRules) exchangeRules(frames [][]byte, header http.Header, status int, reply []byte) (check.Set, string) {
	if pr == nil || pr.exchange == nil || len(frames) != 1 {
		return 0, ""
	}
	var req, rep wire.Message
	wire.Scan(frames[0], &req)
	x := profile.Exchange{Request: &req, Header: header, Status: status}
	if reply != nil {
		wire.Scan(reply, &rep)
		x.Reply = &rep
	}
	return pr.exchange(&x)
}

// isLifecycle reports whether method (a raw JSON string, quotes included)
// names a method that starts or ends a session.
func (pr *profileRules) isLifecycle(method []byte) bool {
	if len(pr.lifecycle) == 0 {
		return false
	}
	var buf [64]byte
	name, ok := wire.Unquote(buf[:0], method)
	return ok && pr.lifecycle[string(name)]
}

// cancels returns the ids an MCP notifications/cancelled frame names.
func (pr *profileRules) cancels(frames [][]byte) [][]byte {
	if pr == nil || !pr.cancelOmits {
		return nil
	}
	var ids [][]byte
	var m wire.Message
	for _, f := range frames {
		wire.Scan(f, &m)
		if m.Kind != wire.KindNotification || string(m.Method) != `"notifications/cancelled"` || len(m.Params) == 0 || m.Params[0] != '{' {
			continue
		}
		eachMemberRaw(m.Params, func(name, value []byte) {
			if string(name) == `"requestId"` {
				ids = append(ids, value)
			}
		})
	}
	return ids
}

// eachMemberRaw calls fn with the raw name and value of each member of the
// object obj (valid JSON, as wire.Scan checked its frame).
func eachMemberRaw(obj []byte, fn func(name, value []byte)) {
	it, _ := wire.ObjectMembers(obj)
	for name, value, ok := it.Next(); ok; name, value, ok = it.Next() {
		fn(name, value)
	}
}
