package threshold

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/check"
)

// Threshold is one parsed gate expression: a figure of the result, a
// comparison and a limit, which is a number in the figure's unit or a
// multiple of another figure of the same result.
type Threshold struct {
	src   string // as the user wrote it, for verdicts and messages
	left  operand
	op    op
	lit   float64 // a number limit, as written in unit
	unit  string  // "" when the limit is plain, or a multiple of right
	right operand // right.figure == "" for a number limit
	// factor multiplies right; it is 1 when the limit is a bare figure.
	factor float64
}

// operand names a figure and the part of the result it is measured on.
type operand struct {
	figure string // the canonical name (p99.9, never its alias p999; server.NAME.per_request)
	method string // "" = all methods
	rule   string // violations only; "" = every rule but the warnings
	gauge  string // server.NAME.* only: the gauge
	fate   string // server.NAME.per_request only; "" = every request
}

// name is the figure as written, its gauge in place of NAME.
func (o operand) name() string {
	if o.gauge == "" {
		return o.figure
	}
	return strings.Replace(o.figure, gaugePlaceholder, gaugeText(o.gauge), 1)
}

type op uint8

const (
	opLT op = iota + 1
	opLE
	opGT
	opGE
	opEQ
	opNE
)

var opText = [...]string{"", "<", "<=", ">", ">=", "==", "!="}

func (o op) holds(value, limit float64) bool {
	switch o {
	case opLT:
		return value < limit
	case opLE:
		return value <= limit
	case opGT:
		return value > limit
	case opGE:
		return value >= limit
	case opEQ:
		return value == limit
	case opNE:
		return value != limit
	}
	return false
}

// durationUnits are the units a latency limit may carry, as a multiple of
// a microsecond, the unit of the result file. Both micro signs are
// accepted (U+00B5 and U+03BC), as time.ParseDuration does.
var durationUnits = map[string]float64{
	"ns": 1e-3, "us": 1, "µs": 1, "μs": 1, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6,
}

// ParseError is a threshold expression that could not be read, with the
// column (in characters, from 1) where reading stopped.
type ParseError struct {
	Expr   string
	Column int
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("threshold %q: column %d: %s", e.Expr, e.Column, e.Msg)
}

// Parse reads one expression such as `p99<50ms`,
// `p99{method=eth_call}<20ms`, `error_rate<0.1%` or
// `achieved_rate>=0.99*target`. docs/thresholds.md has the grammar.
func Parse(expr string) (Threshold, error) {
	p := &parser{src: expr}
	t, err := p.threshold()
	if err != nil {
		return Threshold{}, err
	}
	t.src = expr
	return t, nil
}

// String returns the expression in canonical form (no spaces, aliases
// replaced, labels in a fixed order); it parses back to the same
// Threshold.
func (t Threshold) String() string {
	if t.op == 0 {
		return "" // the zero Threshold
	}
	var b strings.Builder
	b.WriteString(t.left.String())
	b.WriteString(opText[t.op])
	if t.right.figure == "" {
		b.WriteString(formatFloat(t.lit))
		b.WriteString(t.unit)
		return b.String()
	}
	if t.factor != 1 {
		b.WriteString(formatFloat(t.factor))
		b.WriteByte('*')
	}
	b.WriteString(t.right.String())
	return b.String()
}

func (o operand) String() string {
	var labels []string
	if o.method != "" {
		labels = append(labels, "method="+quoteLabel(o.method))
	}
	if o.rule != "" {
		labels = append(labels, "rule="+quoteLabel(o.rule))
	}
	if o.fate != "" {
		labels = append(labels, "fate="+o.fate)
	}
	if len(labels) == 0 {
		return o.name()
	}
	return o.name() + "{" + strings.Join(labels, ",") + "}"
}

// quoteLabel writes v bare when it reads back bare, else quoted.
func quoteLabel(v string) string {
	for _, r := range v {
		if !bareRune(r) {
			return strconv.Quote(v)
		}
	}
	if v == "" {
		return `""`
	}
	return v
}

// bareRune reports whether r may appear in an unquoted label value. Method
// names such as tools/call, $/cancelRequest or (unmatched) need no quotes;
// the label syntax's own characters and spaces do.
func bareRune(r rune) bool {
	return r != utf8.RuneError && unicode.IsPrint(r) && r != ' ' && !strings.ContainsRune(`{},="\`, r)
}

// formatFloat writes the shortest form that parses back to v, with an
// exponent only for very large or small numbers.
func formatFloat(v float64) string {
	if a := math.Abs(v); a == 0 || a >= 1e-4 && a < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

type parser struct {
	src string
	pos int // byte offset
}

func (p *parser) errorf(pos int, format string, args ...any) error {
	return &ParseError{Expr: p.src, Column: utf8.RuneCountInString(p.src[:pos]) + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) eat(c byte) bool {
	if p.peek() == c && p.pos < len(p.src) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) space() {
	for p.peek() == ' ' || p.peek() == '\t' {
		p.pos++
	}
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// ident reads a figure or label name: a letter, then letters, digits,
// underscores and dots (p99.9).
func (p *parser) ident() string {
	start := p.pos
	if !isLetter(p.peek()) {
		return ""
	}
	for c := p.peek(); isLetter(c) || isDigit(c) || c == '_' || c == '.'; c = p.peek() {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *parser) threshold() (Threshold, error) {
	var t Threshold
	p.space()
	left, def, err := p.operand()
	if err != nil {
		return t, err
	}
	t.left = left
	p.space()
	if t.op, err = p.operator(); err != nil {
		return t, err
	}
	p.space()
	if err := p.limit(&t, def); err != nil {
		return t, err
	}
	p.space()
	if p.pos < len(p.src) {
		rest := p.src[p.pos:]
		if len(rest) > 24 {
			rest = rest[:24] + "…"
		}
		msg := fmt.Sprintf("unexpected %q after the limit", rest)
		if p.peek() == '*' {
			msg += "; a multiple of a figure is written K*figure, as in 0.99*target"
		}
		return t, p.errorf(p.pos, "%s", msg)
	}
	return t, nil
}

// operand reads a figure name and its labels.
func (p *parser) operand() (operand, *figureDef, error) {
	start := p.pos
	if strings.HasPrefix(p.src[p.pos:], serverPrefix) {
		return p.serverOperand()
	}
	name := p.ident()
	if name == "" {
		return operand{}, nil, p.errorf(start, "expected a figure such as p99 or error_rate")
	}
	i, ok := figureIndex[name]
	if !ok {
		return operand{}, nil, p.errorf(start, "unknown figure %q; figures are %s", name, figureSummary())
	}
	def := &figureDefs[i]
	o := operand{figure: def.Name}
	p.space()
	if p.eat('{') {
		if err := p.labels(&o, def); err != nil {
			return o, nil, err
		}
	}
	return o, def, nil
}

// labels reads `key=value, ...}` after the opening brace.
func (p *parser) labels(o *operand, def *figureDef) error {
	for {
		p.space()
		keyPos := p.pos
		key := p.ident()
		switch {
		case key == "":
			return p.errorf(keyPos, "expected a label: method=NAME or rule=NAME")
		case key == "method" && o.method != "", key == "rule" && o.rule != "", key == "fate" && o.fate != "":
			return p.errorf(keyPos, "label %s given twice", key)
		case key == "fate" && def.Name != serverPerRequest:
			return p.errorf(keyPos, "the fate label applies to server.NAME.per_request only, not %s", def.Name)
		case key == "method" && !def.PerMethod:
			return p.errorf(keyPos, "%s has no per-method value", def.Name)
		case key == "rule" && def.Name != "violations":
			return p.errorf(keyPos, "the rule label applies to violations only, not %s", def.Name)
		case key != "method" && key != "rule" && key != "fate":
			return p.errorf(keyPos, "unknown label %q; labels are method, rule and fate", key)
		}
		p.space()
		if !p.eat('=') {
			return p.errorf(p.pos, "expected = after %s", key)
		}
		p.space()
		valPos := p.pos
		val, err := p.labelValue()
		if err != nil {
			return err
		}
		if val == "" {
			return p.errorf(valPos, "expected a %s name", key)
		}
		switch key {
		case "method":
			o.method = val
		case "fate":
			if !slices.Contains(fateNames, val) {
				return p.errorf(valPos, "unknown fate %q; fates are %s", val, strings.Join(fateNames, ", "))
			}
			o.fate = val
		default:
			if _, ok := check.ParseRule(val); !ok {
				return p.errorf(valPos, "unknown rule %q; rules are %s", val, strings.Join(ruleNames(), ", "))
			}
			o.rule = val
		}
		p.space()
		switch {
		case p.eat(','):
		case p.eat('}'):
			return nil
		default:
			return p.errorf(p.pos, "expected , or } after the label")
		}
	}
}

// labelValue reads a bare value, or a double-quoted one with Go escapes
// for names that hold spaces, commas or braces.
func (p *parser) labelValue() (string, error) {
	if p.peek() == '"' {
		q, err := strconv.QuotedPrefix(p.src[p.pos:])
		if err != nil {
			return "", p.errorf(p.pos, "unterminated or malformed quoted value")
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return "", p.errorf(p.pos, "malformed quoted value")
		}
		p.pos += len(q)
		return v, nil
	}
	start := p.pos
	for p.pos < len(p.src) {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if !bareRune(r) {
			break
		}
		p.pos += n
	}
	return p.src[start:p.pos], nil
}

func (p *parser) operator() (op, error) {
	// Two-character operators first, so <= is not read as <.
	for _, o := range []op{opLE, opGE, opEQ, opNE, opLT, opGT} {
		if strings.HasPrefix(p.src[p.pos:], opText[o]) {
			p.pos += len(opText[o])
			return o, nil
		}
	}
	return 0, p.errorf(p.pos, "expected a comparison: < <= > >= == !=")
}

// limit reads the right-hand side: a number with a unit fitting left, or
// K*figure, or a figure alone.
func (p *parser) limit(t *Threshold, left *figureDef) error {
	start := p.pos
	if isLetter(p.peek()) {
		t.factor = 1
		return p.rightFigure(t, left)
	}
	num, ok, err := p.number()
	if err != nil {
		return err
	}
	if !ok {
		return p.errorf(start, "expected a number")
	}
	p.space()
	if p.eat('*') {
		p.space()
		t.factor = num
		return p.rightFigure(t, left)
	}
	unitPos := p.pos
	unit := p.unit()
	if p.space(); p.peek() == '*' && unit != "" {
		return p.errorf(unitPos, "the factor of K*figure takes no unit")
	}
	scaled := num
	switch left.kind {
	case kindDuration:
		mult, ok := durationUnits[unit]
		if !ok {
			if unit == "" {
				return p.errorf(unitPos, "%s is a duration: give a unit (ns, us, µs, ms, s, m, h)", left.Name)
			}
			return p.errorf(unitPos, "%s is a duration: use ns, us, µs, ms, s, m or h, not %q", left.Name, unit)
		}
		scaled = num * mult
	case kindFraction:
		switch unit {
		case "%":
			scaled = num / 100
		case "":
			if num > 1 {
				return p.errorf(start, "%s is a fraction: write %s%% or a number from 0 to 1", left.Name, formatFloat(num))
			}
		default:
			return p.errorf(unitPos, "%s is a fraction: use %% or a plain number, not %q", left.Name, unit)
		}
	default:
		if unit != "" {
			return p.errorf(unitPos, "%s is %s: write a plain number, not %q", left.Name, left.kind.phrase(), unit)
		}
	}
	if math.IsInf(scaled, 0) {
		return p.errorf(start, "%s is out of range", strings.TrimSpace(p.src[start:unitPos+len(unit)]))
	}
	t.lit, t.unit = num, unit
	return nil
}

// rightFigure reads the figure of a K*figure limit, which must measure
// the same kind of thing as the left side.
func (p *parser) rightFigure(t *Threshold, left *figureDef) error {
	start := p.pos
	o, def, err := p.operand()
	if err != nil {
		return err
	}
	if def.kind != left.kind {
		return p.errorf(start, "%s is %s but %s is %s: a limit must be of the same kind", left.Name, left.kind.phrase(), def.Name, def.kind.phrase())
	}
	t.right = o
	return nil
}

// number reads digits with an optional fraction and exponent; ok is false
// when there is no number at p.pos. Signs are not accepted: no figure is
// negative.
func (p *parser) number() (v float64, ok bool, err error) {
	start := p.pos
	digits := p.digits()
	if p.peek() == '.' {
		p.pos++
		digits += p.digits()
	}
	if digits == 0 {
		p.pos = start
		return 0, false, nil
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		mark := p.pos
		p.pos++
		if c := p.peek(); c == '+' || c == '-' {
			p.pos++
		}
		if p.digits() == 0 {
			p.pos = mark
		}
	}
	text := p.src[start:p.pos]
	v, err = strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, true, p.errorf(start, "%s is out of range", text)
	}
	return v, true, nil
}

func (p *parser) digits() int {
	n := 0
	for isDigit(p.peek()) {
		p.pos++
		n++
	}
	return n
}

// unit reads the letters (µ is one) or percent signs after a number.
func (p *parser) unit() string {
	start := p.pos
	for p.pos < len(p.src) {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if !unicode.IsLetter(r) && r != '%' {
			break
		}
		p.pos += n
	}
	return p.src[start:p.pos]
}
