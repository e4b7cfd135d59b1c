package fuzz

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// Bounds of a reply shape: it is part of a dedup key, never a copy of the
// reply, and computing it must not cost more than scanning the reply.
const (
	maxShape         = 240
	maxShapeElements = 64 // array elements looked at; the rest are skipped
)

// replyShape is a short structural summary of a reply: the member names of
// an object with the JSON type of each value (the error object's own member
// names too), the distinct shapes of an array's elements. Two replies that
// differ only in values (another id, another message) have the same shape,
// so findings they break the same rule with are one finding.
//
//	{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}  ->  {error:{code,message},id:num,jsonrpc:str}
func replyShape(reply []byte) string {
	if len(bytes.TrimSpace(reply)) == 0 {
		return "none"
	}
	var m wire.Message
	if wire.Scan(reply, &m); m.Problems.Has(wire.ProblemInvalidJSON) {
		return "not_json"
	}
	var b strings.Builder
	shapeOf(&b, wire.TrimSpace(reply), 0)
	s := b.String()
	if len(s) > maxShape {
		s = s[:maxShape] + "…"
	}
	return s
}

// shapeOf writes the shape of v, one valid JSON value.
func shapeOf(b *strings.Builder, v []byte, depth int) {
	switch c := v[0]; {
	case c == '{':
		if depth > 1 {
			b.WriteString("obj")
			return
		}
		var members []string
		it, _ := wire.ObjectMembers(v)
		for name, val, ok := it.Next(); ok; name, val, ok = it.Next() {
			var m strings.Builder
			m.WriteString(shapeName(name))
			m.WriteByte(':')
			if depth == 0 && string(name) == `"error"` && val[0] == '{' {
				writeMemberNames(&m, val)
			} else {
				shapeOf(&m, val, 2)
			}
			members = append(members, m.String())
		}
		slices.Sort(members)
		b.WriteByte('{')
		b.WriteString(strings.Join(slices.Compact(members), ","))
		b.WriteByte('}')
	case c == '[':
		if depth > 0 {
			b.WriteString("arr")
			return
		}
		var elems []string
		it, _ := wire.ArrayElements(v)
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			if len(elems) == maxShapeElements {
				elems = append(elems, "…")
				break
			}
			var eb strings.Builder
			shapeOf(&eb, e, 1)
			elems = append(elems, eb.String())
		}
		slices.Sort(elems)
		elems = slices.Compact(elems)
		if len(elems) > 4 {
			elems = append(elems[:4], "…")
		}
		b.WriteByte('[')
		b.WriteString(strings.Join(elems, ","))
		b.WriteByte(']')
	case c == '"':
		b.WriteString("str")
	case c == 't' || c == 'f':
		b.WriteString("bool")
	case c == 'n':
		b.WriteString("null")
	default:
		b.WriteString("num")
	}
}

// writeMemberNames writes obj's sorted member names, e.g. {code,message}.
func writeMemberNames(b *strings.Builder, obj []byte) {
	var names []string
	it, _ := wire.ObjectMembers(obj)
	for name, _, ok := it.Next(); ok; name, _, ok = it.Next() {
		names = append(names, shapeName(name))
	}
	slices.Sort(names)
	b.WriteByte('{')
	b.WriteString(strings.Join(names, ","))
	b.WriteByte('}')
}

// shapeName is a member name as written, without its quotes, cut short and
// made printable.
func shapeName(raw []byte) string {
	s := string(raw[1 : len(raw)-1])
	if len(s) > 24 {
		s = s[:24] + "…"
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == ',' || r == ':' || r == '{' || r == '}' {
			return '?'
		}
		return r
	}, s)
}
