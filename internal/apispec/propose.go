package apispec

import (
	"errors"
	"math/rand/v2"

	"github.com/rpcload/rpcload/internal/schemagen"
)

// ErrNoSchema is returned by Propose for invalid params of a method whose
// params nothing describes.
var ErrNoSchema = errors.New("apispec: no params schema")

// Propose returns params for a call of m: valid ones (schemagen's edge
// values, or now and then an example) when valid is set, else ones its
// schema rejects and the constraint they break (schemagen.InvalidWith's
// name for it). A method with no params schema gets an example, or nil
// (no params) for valid, and ErrNoSchema for invalid.
func (m *Method) Propose(r *rand.Rand, valid bool) (params []byte, broke string, err error) {
	if !valid {
		if m.Params == nil {
			return nil, "", ErrNoSchema
		}
		return schemagen.InvalidWith(m.Params, r)
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
