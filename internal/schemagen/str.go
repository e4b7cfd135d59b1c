package schemagen

import (
	"fmt"
	"net/netip"
	"regexp/syntax"
	"strings"
	"time"
	"unicode/utf8"
)

// formats are the values of "format" the generator writes.
var formats = map[string]func(g *gen) string{
	"date-time": func(g *gen) string { return g.time().Format(time.RFC3339) },
	"date":      func(g *gen) string { return g.time().Format(time.DateOnly) },
	"time":      func(g *gen) string { return g.time().Format("15:04:05Z") },
	"uuid":      func(g *gen) string { return g.uuid() },
	"email":     func(g *gen) string { return g.word(3, 8) + "@example.com" },
	"uri":       func(g *gen) string { return "https://example.com/" + g.word(3, 8) },
	"uri-reference": func(g *gen) string {
		return "/" + g.word(3, 8)
	},
	"hostname": func(g *gen) string { return g.word(3, 8) + ".example.com" },
	"ipv4": func(g *gen) string {
		return fmt.Sprintf("192.0.2.%d", g.r.IntN(256))
	},
	"ipv6": func(g *gen) string {
		return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(g.r.IntN(256))}).String()
	},
}

// time is a moment between 2020 and 2030, whole seconds, UTC.
func (g *gen) time() time.Time {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	return time.Unix(start+g.r.Int64N(10*365*86400), 0).UTC()
}

func (g *gen) uuid() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

const letters = "abcdefghijklmnopqrstuvwxyz"

// word is a lowercase word of min to max letters.
func (g *gen) word(lo, hi int) string {
	n := lo
	if hi > lo {
		n += g.r.IntN(hi - lo + 1)
	}
	var b strings.Builder
	for range n {
		b.WriteByte(letters[g.r.IntN(len(letters))])
	}
	return b.String()
}

func (g *gen) str(w *object) (any, error) {
	lo, _ := count(w, "minLength")
	hi, hasHi := count(w, "maxLength")
	if lo > maxStrLen {
		return nil, errBudget
	}
	if s, ok := g.edgeStr(w, lo, hi, hasHi); ok {
		return s, nil
	}
	if p, ok := str(w, "pattern"); ok {
		s, err := g.fromPatternLen(p, lo, hi, hasHi)
		if err != nil {
			if samples := g.samples(w); len(samples) > 0 {
				g.note("pattern %q: used the schema's example or default", p)
				return g.literal(samples[g.r.IntN(len(samples))])
			}
			return nil, fmt.Errorf("schemagen: pattern %q: %w and the schema gives no example or default", p, err)
		}
		return s, nil
	}
	if f, ok := str(w, "format"); ok {
		if fn, ok := formats[f]; ok {
			s := fn(g)
			if n := int64(utf8.RuneCountInString(s)); n >= lo && (!hasHi || n <= hi) {
				return s, nil
			}
		}
	}
	if !hasHi {
		hi = max(lo+8, 10)
	}
	if lo == 0 && hi >= 3 && g.r.IntN(8) != 0 {
		lo = 3
	}
	if hi > lo+64 {
		hi = lo + 64
	}
	if lo > hi {
		return nil, errUnsat
	}
	s := g.word(int(lo), int(hi))
	g.size += len(s)
	return s, nil
}

// fromPatternLen tries repetition counts of several sizes until the string
// has a length in range.
func (g *gen) fromPatternLen(p string, lo, hi int64, hasHi bool) (string, error) {
	target := lo + 8
	if hasHi {
		target = hi
	}
	target = min(target, maxStrLen/2)
	var s string
	var err error
	for try := range 24 {
		reps := []int{3, int(target), int(target/2) + 1, int(target * 2)}[try%4]
		s, err = g.fromPattern(p, reps, try/4%2 == 1)
		if err != nil {
			return "", err
		}
		if n := int64(utf8.RuneCountInString(s)); n >= lo && (!hasHi || n <= hi) {
			break
		}
	}
	return s, nil
}

// fromPattern writes a string the regular expression matches, for the
// subset of syntax that can be generated: literals, classes, ., groups,
// alternation, repetition, anchors. An open repetition is repeated up to
// reps more times than its minimum, in the upper half of that when high.
func (g *gen) fromPattern(p string, reps int, high bool) (string, error) {
	if len(p) > 4096 {
		return "", fmt.Errorf("too long to generate from")
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("not a pattern the generator can read (%v)", err)
	}
	var b strings.Builder
	budget := 4096
	if err := g.regex(re, &b, reps, high, &budget); err != nil {
		return "", err
	}
	g.size += b.Len()
	return b.String(), nil
}

func (g *gen) regex(re *syntax.Regexp, b *strings.Builder, reps int, high bool, budget *int) error {
	*budget--
	if *budget < 0 || b.Len() > maxStrLen {
		return fmt.Errorf("generates too long a string")
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return fmt.Errorf("matches nothing")
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return nil
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		c, ok := g.classRune(re.Rune)
		if !ok {
			return fmt.Errorf("empty character class")
		}
		b.WriteRune(c)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte(letters[g.r.IntN(len(letters))])
	case syntax.OpCapture:
		return g.regex(re.Sub[0], b, reps, high, budget)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if err := g.regex(s, b, reps, high, budget); err != nil {
				return err
			}
		}
	case syntax.OpAlternate:
		return g.regex(re.Sub[g.r.IntN(len(re.Sub))], b, reps, high, budget)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, reps
		switch re.Op {
		case syntax.OpPlus:
			lo, hi = 1, reps+1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + reps
			}
		}
		if high && re.Op != syntax.OpQuest {
			lo = max(lo, (lo+hi)/2)
		}
		n := lo + g.r.IntN(hi-lo+1)
		for range n {
			if err := g.regex(re.Sub[0], b, reps, high, budget); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("uses %v, which the generator does not write", re.Op)
	}
	return nil
}

// classRune picks a rune from a class given as ranges, preferring letters and
// digits, then printable ASCII.
func (g *gen) classRune(ranges []rune) (rune, bool) {
	if len(ranges) == 0 {
		return 0, false
	}
	for _, pref := range [][2]rune{{'0', 'z'}, {' ' + 1, '~'}} {
		var cand [][2]rune
		for i := 0; i+1 < len(ranges); i += 2 {
			lo, hi := max(ranges[i], pref[0]), min(ranges[i+1], pref[1])
			if lo <= hi {
				cand = append(cand, [2]rune{lo, hi})
			}
		}
		if len(cand) > 0 {
			c := cand[g.r.IntN(len(cand))]
			return c[0] + rune(g.r.IntN(int(c[1]-c[0]+1))), true
		}
	}
	i := 2 * g.r.IntN(len(ranges)/2)
	lo, hi := ranges[i], ranges[i+1]
	span := int(min(hi-lo, 1<<16))
	c := lo + rune(g.r.IntN(span+1))
	if !utf8.ValidRune(c) {
		c = lo
	}
	return c, utf8.ValidRune(c)
}
