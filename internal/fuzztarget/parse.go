package fuzztarget

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of the tokenizer. crashDepth and crashBatch are where planted bugs
// fire; maxDepth is the honest limit, the one encoding/json has.
const (
	crashDepth = 64
	crashBatch = 1000
	maxDepth   = 10000
)

// kind is the JSON type of a value, told by its first byte.
type kind uint8

const (
	kindInvalid kind = iota
	kindObject
	kindArray
	kindString
	kindNumber
	kindLiteral // true, false or null
)

// kindOf classifies the value that starts with c.
func kindOf(c byte) kind {
	switch {
	case c == '{':
		return kindObject
	case c == '[':
		return kindArray
	case c == '"':
		return kindString
	case c == '-' || c >= '0' && c <= '9':
		return kindNumber
	case c == 't' || c == 'f' || c == 'n':
		return kindLiteral
	}
	return kindInvalid
}

// syntaxError is why a frame is not JSON; its text is the data of the
// -32700 reply.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

// parser validates one frame (RFC 8259, UTF-8 strings, depth <= maxDepth).
// It panics with Crash where a planted bug's trigger is met. Recursion is
// bounded by maxDepth, so a deep frame cannot exhaust the stack.
type parser struct {
	b    []byte
	i    int
	bugs Bug
	err  *syntaxError
}

// parse validates frame and returns the kind of its top-level value, or the
// syntax error that makes it unparseable.
func parse(frame []byte, bugs Bug) (kind, error) {
	p := parser{b: frame, bugs: bugs}
	k, ok := p.value(0)
	if ok {
		p.ws()
		if p.i < len(p.b) {
			ok = p.fail("data after the JSON value")
		}
	}
	if !ok {
		return kindInvalid, p.err
	}
	return k, nil
}

// fail records the first syntax error at the current offset and returns
// false, so callers can `return p.fail(...)`.
func (p *parser) fail(msg string) bool {
	if p.err == nil {
		p.err = &syntaxError{off: p.i, msg: msg}
	}
	return false
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads one value inside containers nested depth deep.
func (p *parser) value(depth int) (kind, bool) {
	p.ws()
	if p.i >= len(p.b) {
		return kindInvalid, p.fail("unexpected end of input")
	}
	c := p.b[p.i]
	switch k := kindOf(c); k {
	case kindObject:
		return k, p.object(depth + 1)
	case kindArray:
		return k, p.array(depth + 1)
	case kindString:
		return k, p.str()
	case kindNumber:
		return k, p.number()
	case kindLiteral:
		return k, p.literal()
	}
	return kindInvalid, p.fail("invalid character " + quoteByte(c))
}

// enter checks the depth of a container about to be read.
func (p *parser) enter(depth int) bool {
	if depth > crashDepth && p.bugs&DeepNesting != 0 {
		panic(Crash{DeepNesting})
	}
	if depth > maxDepth {
		return p.fail(fmt.Sprintf("nesting deeper than %d", maxDepth))
	}
	p.i++ // the opening bracket
	p.ws()
	return true
}

func (p *parser) object(depth int) bool {
	if !p.enter(depth) {
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	var names nameSet
	track := p.bugs&DuplicateKey != 0
	for {
		p.ws()
		switch {
		case p.i >= len(p.b):
			return p.fail("unexpected end of input")
		case p.b[p.i] != '"':
			return p.fail("expected a member name")
		}
		start := p.i
		if !p.str() {
			return false
		}
		if track && !names.add(unquote(p.b[start:p.i])) {
			panic(Crash{DuplicateKey})
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.fail("expected ':' after a member name")
		}
		p.i++
		if _, ok := p.value(depth); !ok {
			return false
		}
		if !p.next('}') {
			return p.err == nil
		}
	}
}

func (p *parser) array(depth int) bool {
	if !p.enter(depth) {
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return true
	}
	for n := 1; ; n++ {
		if depth == 1 && n > crashBatch && p.bugs&BigBatch != 0 {
			panic(Crash{BigBatch})
		}
		if _, ok := p.value(depth); !ok {
			return false
		}
		if !p.next(']') {
			return p.err == nil
		}
	}
}

// next reads the separator after a member or element: true after a comma
// (another one follows), false after the closing bracket or on an error.
func (p *parser) next(closing byte) bool {
	p.ws()
	switch {
	case p.i >= len(p.b):
		return p.fail("unexpected end of input")
	case p.b[p.i] == ',':
		p.i++
		return true
	case p.b[p.i] == closing:
		p.i++
		return false
	}
	return p.fail("expected ',' or '" + string(closing) + "', found " + quoteByte(p.b[p.i]))
}

func (p *parser) str() bool {
	p.i++ // the opening quote
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			if !p.escape() {
				return false
			}
		case c < 0x20:
			return p.fail("control character " + quoteByte(c) + " in a string")
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size == 1 {
				return p.fail("invalid UTF-8 in a string")
			}
			p.i += size
		}
	}
	return p.fail("unterminated string")
}

// escape reads one escape sequence starting at the backslash.
func (p *parser) escape() bool {
	if p.i+1 >= len(p.b) {
		p.i = len(p.b)
		return p.fail("unterminated string")
	}
	switch p.b[p.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i += 2
		return true
	case 'u':
	default:
		return p.fail("invalid escape " + quoteByte(p.b[p.i+1]))
	}
	r, ok := hex4(p.b, p.i+2)
	if !ok {
		return p.fail(`invalid \u escape`)
	}
	p.i += 6
	switch {
	case r >= 0xD800 && r < 0xDC00:
		if low, ok := lowSurrogate(p.b, p.i); ok && low {
			p.i += 6
			return true
		}
		p.loneSurrogate()
	case r >= 0xDC00 && r < 0xE000:
		p.loneSurrogate()
	}
	return true
}

func (p *parser) loneSurrogate() {
	if p.bugs&LoneSurrogate != 0 {
		panic(Crash{LoneSurrogate})
	}
}

// lowSurrogate reports whether b[i:] starts with a \uDC00-\uDFFF escape
// (ok is false when no complete \u escape is there).
func lowSurrogate(b []byte, i int) (low, ok bool) {
	if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return false, false
	}
	r, ok := hex4(b, i+2)
	return ok && r >= 0xDC00 && r < 0xE000, ok
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *parser) number() bool {
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return p.fail("a number needs digits")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return p.fail("a fraction needs digits")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return p.fail("an exponent needs digits")
		}
	}
	return true
}

// digits skips a run of decimal digits and returns its length.
func (p *parser) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

func (p *parser) literal() bool {
	for _, word := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(p.b[p.i:], []byte(word)) {
			p.i += len(word)
			return true
		}
	}
	return p.fail("invalid literal")
}

// quoteByte shows c in a message: quoted when printable ASCII, else in hex.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// nameSet finds repeated member names: a slice while small, a map beyond,
// so a wide object costs linear time.
type nameSet struct {
	list []string
	set  map[string]struct{}
}

// add records name and reports whether it was new.
func (s *nameSet) add(name string) bool {
	if s.set != nil {
		if _, dup := s.set[name]; dup {
			return false
		}
		s.set[name] = struct{}{}
		return true
	}
	for _, n := range s.list {
		if n == name {
			return false
		}
	}
	s.list = append(s.list, name)
	if len(s.list) > 16 {
		s.set = make(map[string]struct{}, 2*len(s.list))
		for _, n := range s.list {
			s.set[n] = struct{}{}
		}
		s.list = nil
	}
	return true
}

// unquote decodes a string token the parser accepted (quotes included).
// Lone surrogates become U+FFFD, as encoding/json decodes them.
func unquote(raw []byte) string {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s)
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			sb.WriteByte(c)
			i++
			continue
		}
		switch e := s[i+1]; e {
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, _ := hex4(s, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				if low, ok := lowSurrogate(s, i); ok && low && r < 0xDC00 {
					r2, _ := hex4(s, i+2)
					r = utf16.DecodeRune(r, r2)
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			sb.WriteRune(r)
			continue
		default: // '"', '\\', '/'
			sb.WriteByte(e)
		}
		i += 2
	}
	return sb.String()
}
