package canonjson

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Path is a compiled ignore path: a small subset of JSONPath (RFC 9535)
// that names places in a JSON value.
//
//	$                 the whole value
//	.name             a member (name: a letter, "_" or non-ASCII first, then also digits)
//	["name"] ['name'] a member by any name (double quotes: JSON string escapes;
//	                  single quotes: the same, with \' for a quote)
//	[3]               an array element (0-based)
//	.* or [*]         any member of an object or any element of an array
//	..name ..* ..[3]  the step that follows, at any depth below (descendants)
//
// Filters, slices, negative indexes, unions and functions are not part of
// the subset. A path matches a place and therefore everything below it.
type Path struct {
	text  string
	steps []step
}

type stepKind uint8

const (
	stepMember stepKind = iota // a member with this name
	stepIndex                  // an array element with this index
	stepAny                    // any member or element
)

type step struct {
	kind       stepKind
	name       string
	index      int
	descendant bool // matches at any depth below the previous step
}

// String returns the path as it was written.
func (p Path) String() string { return p.text }

// ParsePath compiles s. Errors name the 1-based column at fault.
func ParsePath(s string) (Path, error) {
	p := pathParser{s: s}
	steps, err := p.parse()
	if err != nil {
		return Path{}, fmt.Errorf("path %q: column %d: %s", s, p.pos+1, err)
	}
	return Path{text: s, steps: steps}, nil
}

// ParsePaths compiles each of texts; the error is the first one's.
func ParsePaths(texts []string) ([]Path, error) {
	paths := make([]Path, 0, len(texts))
	for _, t := range texts {
		p, err := ParsePath(t)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

type pathParser struct {
	s   string
	pos int
}

type parseError string

func (e parseError) Error() string { return string(e) }

func (p *pathParser) parse() ([]step, error) {
	if !strings.HasPrefix(p.s, "$") {
		return nil, parseError("a path starts with $")
	}
	p.pos = 1
	var steps []step
	for p.pos < len(p.s) {
		var st step
		switch p.s[p.pos] {
		case '.':
			p.pos++
			if p.pos < len(p.s) && p.s[p.pos] == '.' {
				p.pos++
				st.descendant = true
				if p.pos < len(p.s) && p.s[p.pos] == '[' {
					if err := p.bracket(&st); err != nil {
						return nil, err
					}
					break
				}
			}
			if err := p.dotted(&st); err != nil {
				return nil, err
			}
		case '[':
			if err := p.bracket(&st); err != nil {
				return nil, err
			}
		default:
			return nil, parseError(fmt.Sprintf("expected '.' or '[', found %q", p.rune()))
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// rune is the character at the current position, for messages.
func (p *pathParser) rune() rune {
	r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
	return r
}

// dotted reads what follows a '.': a member name or '*'.
func (p *pathParser) dotted(st *step) error {
	if p.pos < len(p.s) && p.s[p.pos] == '*' {
		p.pos++
		st.kind = stepAny
		return nil
	}
	start := p.pos
	for p.pos < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.pos:])
		if r == utf8.RuneError && size <= 1 {
			return parseError("invalid UTF-8")
		}
		if !nameChar(r, p.pos == start) {
			break
		}
		p.pos += size
	}
	if p.pos == start {
		if p.pos == len(p.s) {
			return parseError("expected a member name or * after '.'")
		}
		return parseError(fmt.Sprintf("expected a member name or * after '.', found %q (use [\"...\"] for other names)", p.rune()))
	}
	st.kind, st.name = stepMember, p.s[start:p.pos]
	return nil
}

// nameChar reports whether r may appear in a dotted member name (RFC 9535's
// member-name-shorthand): letters, '_' and non-ASCII anywhere, digits after
// the first character.
func nameChar(r rune, first bool) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r >= 0x80:
		return true
	case r >= '0' && r <= '9':
		return !first
	}
	return false
}

// bracket reads a bracketed step: [*], [N], ["name"] or ['name'].
func (p *pathParser) bracket(st *step) error {
	p.pos++ // '['
	if p.pos >= len(p.s) {
		return parseError("expected *, an index or a quoted name after '['")
	}
	switch c := p.s[p.pos]; {
	case c == '*':
		p.pos++
		st.kind = stepAny
	case c >= '0' && c <= '9':
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		digits := p.s[start:p.pos]
		if len(digits) > 1 && digits[0] == '0' {
			p.pos = start
			return parseError("an index has no leading zeros")
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			p.pos = start
			return parseError("index too large")
		}
		st.kind, st.index = stepIndex, n
	case c == '"' || c == '\'':
		name, err := p.quoted(c)
		if err != nil {
			return err
		}
		st.kind, st.name = stepMember, name
	case c == '-':
		return parseError("negative indexes are not supported")
	default:
		return parseError(fmt.Sprintf("expected *, an index or a quoted name after '[', found %q", p.rune()))
	}
	if p.pos >= len(p.s) || p.s[p.pos] != ']' {
		return parseError("expected ']'")
	}
	p.pos++
	return nil
}

// quoted reads a quoted member name. The text between the quotes is read as
// a JSON string; in single quotes, \' stands for a quote and a bare " is
// itself.
func (p *pathParser) quoted(q byte) (string, error) {
	start := p.pos
	p.pos++
	var js strings.Builder
	js.WriteByte('"')
	for {
		if p.pos >= len(p.s) {
			p.pos = start
			return "", parseError("unterminated quoted name")
		}
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			js.WriteByte('"')
			var name string
			if err := json.Unmarshal([]byte(js.String()), &name); err != nil {
				p.pos = start
				return "", parseError("invalid quoted name: " + strings.TrimPrefix(err.Error(), "json: "))
			}
			return name, nil
		case c == '\\' && p.pos+1 < len(p.s) && q == '\'' && p.s[p.pos+1] == '\'':
			js.WriteByte('\'')
			p.pos += 2
		case c == '\\' && p.pos+1 < len(p.s):
			js.WriteString(p.s[p.pos : p.pos+2])
			p.pos += 2
		case c == '"': // only inside single quotes
			js.WriteString(`\"`)
			p.pos++
		case c < 0x20:
			return "", parseError("control character in a quoted name")
		default:
			js.WriteByte(c)
			p.pos++
		}
	}
}

// segment is one step of a concrete place in a value: a member name, or an
// index when isIndex.
type segment struct {
	name    string
	index   int
	isIndex bool
}

// matches reports whether the place segs is the one p names (or, with
// descendant steps, one of them).
func (p Path) matches(segs []segment) bool { return matchSteps(p.steps, segs) }

func matchSteps(steps []step, segs []segment) bool {
	if len(steps) == 0 {
		return len(segs) == 0
	}
	st := steps[0]
	if !st.descendant {
		return len(segs) > 0 && st.matches(segs[0]) && matchSteps(steps[1:], segs[1:])
	}
	for i := range segs {
		if st.matches(segs[i]) && matchSteps(steps[1:], segs[i+1:]) {
			return true
		}
	}
	return false
}

func (st step) matches(s segment) bool {
	switch st.kind {
	case stepAny:
		return true
	case stepIndex:
		return s.isIndex && s.index == st.index
	default:
		return !s.isIndex && s.name == st.name
	}
}

// formatPath writes segs as a path ParsePath reads back: dotted names where
// RFC 9535 allows them (ASCII only, to keep reports plain), ["..."]
// otherwise.
func formatPath(segs []segment) string {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range segs {
		switch {
		case s.isIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case dottedName(s.name):
			b.WriteByte('.')
			b.WriteString(s.name)
		default:
			q, _ := json.Marshal(s.name) // a string always marshals
			b.WriteByte('[')
			b.Write(q)
			b.WriteByte(']')
		}
	}
	return b.String()
}

func dottedName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 || !nameChar(rune(c), i == 0) {
			return false
		}
	}
	return true
}
