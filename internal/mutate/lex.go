package mutate

import "github.com/rpcload/rpcload/internal/wire"

// The byte-level ops need to know where tokens start and end, nothing more:
// a tolerant one-pass lexer that accepts anything (broken input is what the
// earlier ops of a chain leave behind) and never allocates.

type tokKind uint8

const (
	tokOpen   tokKind = iota + 1 // { or [
	tokClose                     // } or ]
	tokColon                     // :
	tokComma                     // ,
	tokString                    // "..." (possibly unterminated, then up to the end)
	tokScalar                    // a run of anything else: numbers, literals, garbage
)

type token struct {
	kind       tokKind
	start, end int
	key        bool // a string followed by ':' (an object member name)
	closed     bool // a string with its closing quote
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func isDelim(b byte) bool {
	switch b {
	case '{', '}', '[', ']', ',', ':', '"':
		return true
	}
	return isSpace(b)
}

// lex calls visit for each token of b in order until visit returns false.
func lex(b []byte, visit func(token) bool) {
	for i := 0; i < len(b); {
		var t token
		switch ch := b[i]; {
		case isSpace(ch):
			i++
			continue
		case ch == '{' || ch == '[':
			t = token{kind: tokOpen, start: i, end: i + 1}
		case ch == '}' || ch == ']':
			t = token{kind: tokClose, start: i, end: i + 1}
		case ch == ':':
			t = token{kind: tokColon, start: i, end: i + 1}
		case ch == ',':
			t = token{kind: tokComma, start: i, end: i + 1}
		case ch == '"':
			j, closed := wire.StringEnd(b, i)
			k := j
			for k < len(b) && isSpace(b[k]) {
				k++
			}
			t = token{kind: tokString, start: i, end: j, key: k < len(b) && b[k] == ':', closed: closed}
		default:
			j := i + 1
			for j < len(b) && !isDelim(b[j]) {
				j++
			}
			t = token{kind: tokScalar, start: i, end: j}
		}
		if !visit(t) {
			return
		}
		i = t.end
	}
}

// pickToken picks one of the tokens match accepts, uniformly, in two passes
// so nothing is collected.
func pickToken(c Chooser, b []byte, match func(token) bool) (token, bool) {
	n := 0
	lex(b, func(t token) bool {
		if match(t) {
			n++
		}
		return true
	})
	if n == 0 {
		return token{}, false
	}
	k := c.Intn(n)
	var got token
	lex(b, func(t token) bool {
		if match(t) {
			if k == 0 {
				got = t
				return false
			}
			k--
		}
		return true
	})
	return got, true
}

func isPunct(t token) bool { return t.kind <= tokComma }

func isValueToken(t token) bool {
	return t.kind == tokScalar || (t.kind == tokString && !t.key)
}

func isString(t token) bool { return t.kind == tokString && t.end-t.start >= 2 }

// structuralPoint picks a place between tokens next to punctuation (after a
// {, [, : or , or before a } or ]): where JSON allows whitespace, so what an
// op puts there is judged by the parser's grammar, not by its string or
// number decoding.
func structuralPoint(c Chooser, b []byte) (int, bool) {
	t, ok := pickToken(c, b, isPunct)
	if !ok {
		return 0, false
	}
	if t.kind == tokClose {
		return t.start, true
	}
	return t.end, true
}

// stringInterior picks an insertion point inside the string token t that
// does not split an escape sequence or a UTF-8 sequence, so what is inserted
// is the only thing wrong with the string.
func stringInterior(c Chooser, b []byte, t token) int {
	last := t.end - 1 // before the closing quote
	if !t.closed {
		last = t.end // anywhere up to the end
	}
	want := t.start + 1 + c.Intn(last-t.start)
	q := t.start + 1
	for q < want {
		step := 1
		switch ch := b[q]; {
		case ch == '\\' && q+1 < len(b) && b[q+1] == 'u':
			step = 6
		case ch == '\\':
			step = 2
		case ch >= 0xF0:
			step = 4
		case ch >= 0xE0:
			step = 3
		case ch >= 0xC0:
			step = 2
		}
		if q+step > want {
			break
		}
		q += step
	}
	return q
}
