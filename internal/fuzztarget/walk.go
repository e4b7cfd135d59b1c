package fuzztarget

import "github.com/rpcload/rpcload/internal/wire"

// The walk goes over text the parser already accepted, so it only finds
// boundaries (wire's raw primitives). They never read out of bounds, so a
// parser bug cannot turn into an index panic that would pass for a planted
// crash.

// member is one member of an object (key decoded) or element of an array
// (key empty); val is its raw value.
type member struct {
	key string
	val []byte
}

// kind returns the JSON type of m's value.
func (m *member) kind() kind {
	if len(m.val) == 0 {
		return kindInvalid
	}
	return kindOf(m.val[0])
}

// items lists the members of the object or the elements of the array that
// starts at raw[0] (raw is valid JSON, leading whitespace trimmed).
func items(raw []byte) []member {
	var out []member
	if obj, ok := wire.ObjectMembers(raw); ok {
		for k, v, ok := obj.Next(); ok; k, v, ok = obj.Next() {
			out = append(out, member{key: unquote(k), val: v})
		}
		return out
	}
	arr, _ := wire.ArrayElements(raw)
	for v, ok := arr.Next(); ok; v, ok = arr.Next() {
		out = append(out, member{val: v})
	}
	return out
}
