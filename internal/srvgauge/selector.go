// Package srvgauge reads the server's own gauges while a run goes on:
// from its Prometheus endpoints (--server-metrics, --server-metric) and
// from /proc for a local process (--server-pid). Reading happens at the
// end of each interval, on the interval's goroutine, never on the load's
// path; every read is bounded in time, and a read that fails is counted
// and described, never a reason to stop the run.
package srvgauge

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// maxSelectorLen bounds a selector's text: it is a flag value, and its
// canonical form becomes a key of every point of the series.
const maxSelectorLen = 1024

// Selector names one gauge of a Prometheus exposition: a metric name and
// label matchers, as in PromQL (go_goroutines,
// http_requests_in_flight{handler="/rpc"}). Several series may match; the
// gauge is their sum.
type Selector struct {
	Name     string
	Matchers []Matcher // sorted by label name, then value
}

// Matcher is one label condition: the label equals Value, or (Not) does not.
// A label the series lacks has the empty value, as in PromQL.
type Matcher struct {
	Label, Value string
	Not          bool
}

// ParseSelector reads NAME or NAME{label="value",other!="value"}. Values
// are double-quoted, with backslash escapes.
func ParseSelector(s string) (Selector, error) {
	if len(s) > maxSelectorLen {
		return Selector{}, fmt.Errorf("gauge %.40q…: longer than %d bytes", s, maxSelectorLen)
	}
	p := selParser{src: s}
	sel, err := p.selector()
	if err != nil {
		return Selector{}, fmt.Errorf("gauge %q: column %d: %w", s, p.pos+1, err)
	}
	return sel, nil
}

// String writes the selector in canonical form (matchers sorted, values
// quoted): the gauge's name in the series, the report and thresholds.
func (s Selector) String() string {
	if len(s.Matchers) == 0 {
		return s.Name
	}
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteByte('{')
	for i, m := range s.Matchers {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Label)
		if m.Not {
			b.WriteByte('!')
		}
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// matches reports whether a series with these labels is one the selector
// picks.
func (s Selector) matches(labels []*dto.LabelPair) bool {
	for _, m := range s.Matchers {
		v := ""
		for _, l := range labels {
			if l.GetName() == m.Label {
				v = l.GetValue()
				break
			}
		}
		if (v == m.Value) == m.Not {
			return false
		}
	}
	return true
}

type selParser struct {
	src string
	pos int
}

func (p *selParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *selParser) space() {
	for p.peek() == ' ' || p.peek() == '\t' {
		p.pos++
	}
}

func (p *selParser) selector() (Selector, error) {
	var s Selector
	p.space()
	s.Name = p.name(true)
	if s.Name == "" {
		return s, errors.New("expected a metric name (letters, digits, _ and :, not starting with a digit)")
	}
	p.space()
	if p.peek() == '{' {
		p.pos++
		if err := p.matchers(&s); err != nil {
			return s, err
		}
		p.space()
	}
	if p.pos < len(p.src) {
		return s, fmt.Errorf("unexpected %q", p.src[p.pos:])
	}
	slices.SortFunc(s.Matchers, func(a, b Matcher) int {
		if c := strings.Compare(a.Label, b.Label); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	return s, nil
}

// name reads a metric name (colons allowed) or a label name.
func (p *selParser) name(metric bool) string {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		ok := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || metric && c == ':' || p.pos > start && '0' <= c && c <= '9'
		if !ok {
			break
		}
		p.pos++
	}
	return p.src[start:p.pos]
}

// matchers reads label="value", … up to the closing brace.
func (p *selParser) matchers(s *Selector) error {
	seen := map[string]bool{}
	for {
		p.space()
		if p.peek() == '}' {
			p.pos++
			return nil
		}
		var m Matcher
		if m.Label = p.name(false); m.Label == "" {
			return errors.New(`expected a label name or }`)
		}
		if seen[m.Label] {
			return fmt.Errorf("label %s given twice", m.Label)
		}
		seen[m.Label] = true
		p.space()
		switch {
		case strings.HasPrefix(p.src[p.pos:], "!="):
			m.Not = true
			p.pos += 2
		case p.peek() == '=':
			p.pos++
		default:
			return fmt.Errorf("expected = or != after %s (regular expressions are not supported)", m.Label)
		}
		p.space()
		if p.peek() != '"' {
			return errors.New(`expected a double-quoted value`)
		}
		q, err := strconv.QuotedPrefix(p.src[p.pos:])
		if err != nil {
			return errors.New("unterminated or malformed quoted value")
		}
		if m.Value, err = strconv.Unquote(q); err != nil {
			return errors.New("malformed quoted value")
		}
		p.pos += len(q)
		s.Matchers = append(s.Matchers, m)
		p.space()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
		default:
			return errors.New("expected , or } after the value")
		}
	}
}
