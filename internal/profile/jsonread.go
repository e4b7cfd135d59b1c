package profile

import (
	"bytes"

	"github.com/rpcload/rpcload/internal/wire"
)

// The readers below walk raw JSON through wire's primitives, without
// decoding it into Go values (which would let a duplicated key silently
// win) and without allocating. Every caller hands them JSON that wire.Scan
// found valid (params checked by validJSON, or parts of a scanned frame);
// on anything else they stay in bounds and find nothing or something
// harmless.

// validJSON reports whether b is one JSON value per encoding/json.Valid.
func validJSON(b []byte) bool {
	var m wire.Message
	wire.Scan(b, &m)
	return !m.Problems.Has(wire.ProblemInvalidJSON)
}

// stringIs reports whether raw is a JSON string whose decoded value is s.
// It does not allocate for strings without escapes, nor for escaped strings
// up to 64 bytes decoded.
func stringIs(raw []byte, s string) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == s
	}
	var buf [64]byte
	d, ok := wire.Unquote(buf[:0], raw)
	return ok && string(d) == s
}

// member returns the value of the member of obj named name; of the last
// one when the name is repeated, as encoding/json and JavaScript's
// JSON.parse (and so most servers) read it.
func member(obj []byte, name string) (val []byte, found bool) {
	it, ok := wire.ObjectMembers(obj)
	if !ok {
		return nil, false
	}
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		if stringIs(k, name) {
			val, found = v, true
		}
	}
	return val, found
}

// stringMember returns the decoded string value of member name of obj.
func stringMember(obj []byte, name string) (string, bool) {
	v, ok := member(obj, name)
	if !ok {
		return "", false
	}
	d, ok := wire.Unquote(nil, v)
	return string(d), ok
}
