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
	shapeAt(&b, reply, skipSpace(reply, 0), 0)
	s := b.String()
	if len(s) > maxShape {
		s = s[:maxShape] + "…"
	}
	return s
}

// shapeAt writes the shape of the valid JSON value at d[i] and returns the
// offset after it.
func shapeAt(b *strings.Builder, d []byte, i, depth int) int {
	switch c := d[i]; {
	case c == '{':
		if depth > 1 {
			b.WriteString("obj")
			return skipValue(d, i)
		}
		var members []string
		end := eachMember(d, i, func(name []byte, v int) int {
			var m strings.Builder
			m.WriteString(shapeName(name))
			m.WriteByte(':')
			var next int
			if depth == 0 && string(name) == `"error"` && d[v] == '{' {
				next = writeMemberNames(&m, d, v)
			} else {
				next = shapeAt(&m, d, v, 2)
			}
			members = append(members, m.String())
			return next
		})
		slices.Sort(members)
		b.WriteByte('{')
		b.WriteString(strings.Join(slices.Compact(members), ","))
		b.WriteByte('}')
		return end
	case c == '[':
		if depth > 0 {
			b.WriteString("arr")
			return skipValue(d, i)
		}
		var elems []string
		j := skipSpace(d, i+1)
		for n := 0; j < len(d) && d[j] != ']'; n++ {
			if n == maxShapeElements {
				elems = append(elems, "…")
				j = skipValue(d, i) - 1
				break
			}
			var e strings.Builder
			j = skipSpace(d, shapeAt(&e, d, j, 1))
			elems = append(elems, e.String())
			if j < len(d) && d[j] == ',' {
				j = skipSpace(d, j+1)
			}
		}
		slices.Sort(elems)
		elems = slices.Compact(elems)
		if len(elems) > 4 {
			elems = append(elems[:4], "…")
		}
		b.WriteByte('[')
		b.WriteString(strings.Join(elems, ","))
		b.WriteByte(']')
		return j + 1
	case c == '"':
		b.WriteString("str")
	case c == 't' || c == 'f':
		b.WriteString("bool")
	case c == 'n':
		b.WriteString("null")
	default:
		b.WriteString("num")
	}
	return skipValue(d, i)
}

// eachMember calls fn for each member of the valid object at d[i] with the
// raw name and the offset of the value; fn returns the offset after the
// value. eachMember returns the offset after the object.
func eachMember(d []byte, i int, fn func(name []byte, v int) int) int {
	j := skipSpace(d, i+1)
	for j < len(d) && d[j] == '"' {
		end, _ := stringEnd(d, j)
		name := d[j:end]
		v := skipSpace(d, skipSpace(d, end)+1) // past the colon
		j = skipSpace(d, fn(name, v))
		if j < len(d) && d[j] == ',' {
			j = skipSpace(d, j+1)
		}
	}
	return j + 1
}

// writeMemberNames writes an object's sorted member names, e.g. {code,message}.
func writeMemberNames(b *strings.Builder, d []byte, i int) int {
	var names []string
	end := eachMember(d, i, func(name []byte, v int) int {
		names = append(names, shapeName(name))
		return skipValue(d, v)
	})
	slices.Sort(names)
	b.WriteByte('{')
	b.WriteString(strings.Join(names, ","))
	b.WriteByte('}')
	return end
}

// skipValue returns the offset after the valid JSON value at d[i].
func skipValue(d []byte, i int) int {
	depth := 0
	for ; i < len(d); i++ {
		switch d[i] {
		case '"':
			end, _ := stringEnd(d, i)
			i = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		default:
			if depth == 0 {
				for i < len(d) && !isDelimiter(d[i]) {
					i++
				}
				return i
			}
			continue
		}
		if depth == 0 {
			return i + 1
		}
	}
	return i
}

func isDelimiter(c byte) bool {
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':'
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
