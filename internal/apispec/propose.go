package apispec

import (
	"errors"
	"math/rand/v2"

	"github.com/rpcload/rpcload/internal/schemagen"
)

// ErrNoSchema is returned by Propose for invalid params of a method whose
// params nothing describes.
var ErrNoSchema = errors.New("apispec: no params schema")

// invalidTries bounds the draws Propose makes for invalid params that are
// an array or an object.
const invalidTries = 16

// Propose returns params for a call of m: valid ones (schemagen's edge
// values, or now and then one of the template's or an example) when valid
// is set, else ones its
// schema rejects and the constraint they break (schemagen.InvalidWith's
// name for it), an array or an object when one of a few draws is: params
// that are neither are an invalid request to JSON-RPC itself (and MCP's
// arguments an object), refused before the method reads them, so they say
// little of the method (they are still sent when no draw is better). A method
// with no params schema gets an example, or nil (no params) for valid, and
// ErrNoSchema for invalid.
func (m *Method) Propose(r *rand.Rand, valid bool) (params []byte, broke string, err error) {
	if !valid {
		if m.Params == nil {
			return nil, "", ErrNoSchema
		}
		for range invalidTries {
			schema := m.Params
			if len(m.forms) > 0 {
				schema = m.forms[r.IntN(len(m.forms))]
			}
			params, broke, err = schemagen.InvalidWith(schema, r)
			if err == nil && len(params) > 0 && (params[0] == '{' || params[0] == '[') {
				// (A value one form rejects may be of the other form.)
				if v, _ := m.CheckParams(params); v != Valid {
					return params, broke, nil
				}
			}
		}
		return schemagen.InvalidWith(m.Params, r)
	}
	if m.Template != nil && (m.Params == nil || r.IntN(4) == 0) {
		if p, ok := m.Template.Append(nil, r, r.Uint64N(1<<32)+1); ok {
			return p, "", nil
		}
	}
	if len(m.Examples) > 0 && (m.Params == nil || r.IntN(4) == 0) {
		return m.Examples[r.IntN(len(m.Examples))], "", nil
	}
	if m.Params == nil {
		return nil, "", nil
	}
	v, err := schemagen.ValidEdges(m.Params, r)
	return v, "", err
}
