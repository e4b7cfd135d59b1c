package gen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// Limits on what Compile accepts, so a hostile or mistaken scenario (deep
// nesting, a YAML alias bomb that decodes into a shared tree) is refused at
// load time instead of exhausting the stack or the memory.
const (
	maxDepth     = 1000
	maxNodes     = 1_000_000
	maxErrors    = 100
	maxStringLen = 1 << 20 // characters of a $string, bytes of a $hex
)

// Template produces JSON (the params of one request) from a compiled value.
// It is immutable after Compile (and SetClock), so many goroutines may call
// Append at once.
type Template struct {
	ops     []op
	feeders []*Feeder // distinct feeders read, in the order first mentioned
	static  []byte    // the whole output when there is no generator
	clock   func() time.Time
}

// CompileError is one problem in a template. Path locates the offending value
// from the root of the value given to Compile: string mapping keys (as
// written, e.g. "$int") and int sequence indexes, so a caller holding the
// YAML node tree can turn it into a line and column.
type CompileError struct {
	Path []any
	Msg  string
}

// Error renders the path like `to[1].$int[0]: message`.
func (e *CompileError) Error() string {
	if len(e.Path) == 0 {
		return e.Msg
	}
	return formatPath(e.Path) + ": " + e.Msg
}

func formatPath(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		case string:
			if plainKey(p) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(p)
			} else {
				fmt.Fprintf(&b, "[%s]", strconv.Quote(p))
			}
		}
	}
	return b.String()
}

// plainKey reports whether a key can be written after a dot without
// ambiguity; others are quoted in brackets.
func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '$' || c == '-' || c == '/' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// Compile turns a decoded YAML/JSON value into a Template. v is what
// go.yaml.in/yaml/v3 or encoding/json decodes into `any` (map[string]any,
// map[any]any with string keys, []any, string, every integer kind, float32,
// float64, json.Number, json.RawMessage, bool, nil, time.Time). feeders
// resolves $feed names.
//
// Compile reports every problem it finds, not just the first: one problem is
// returned as a *CompileError, several as an errors.Join of *CompileError
// (iterate with `interface{ Unwrap() []error }`; errors.As finds the first).
func Compile(v any, feeders map[string]*Feeder) (*Template, error) {
	c := &compiler{feeders: feeders, used: map[*Feeder]int{}}
	c.value(v)
	c.flush()
	switch len(c.errs) {
	case 0:
	case 1:
		return nil, c.errs[0]
	default:
		return nil, errors.Join(c.errs...)
	}
	t := &Template{ops: c.ops, feeders: c.feederList, clock: time.Now}
	switch {
	case len(t.ops) == 1 && t.ops[0].kind == opLit:
		t.static = t.ops[0].lit
	case len(t.ops) == 0:
		t.static = []byte("null") // unreachable: every value emits something
	}
	return t, nil
}

// Static reports whether the template has no generator, and its constant JSON
// (compact). The bytes are the template's own: do not modify them.
func (t *Template) Static() ([]byte, bool) {
	return t.static, t.static != nil
}

// SetClock sets the clock $now reads (nil restores time.Now). It exists so a
// test or a dry run can pin the only non-reproducible generator; call it
// before the first Append, since Append reads it without synchronisation.
func (t *Template) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	t.clock = now
}

// compiler holds the state of one Compile: the operations emitted so far, the
// literal bytes not yet emitted (merged so that constant runs become one
// copy), the path to the value being compiled, and the errors.
type compiler struct {
	feeders    map[string]*Feeder
	used       map[*Feeder]int
	feederList []*Feeder
	ops        []op
	lit        []byte
	path       []any
	depth      int
	nodes      int
	tooBig     bool
	tooDeep    bool
	errs       []error
}

func (c *compiler) errorf(format string, args ...any) {
	if len(c.errs) == maxErrors {
		c.errs = append(c.errs, &CompileError{Msg: fmt.Sprintf("more than %d errors; stopping", maxErrors)})
	}
	if len(c.errs) > maxErrors {
		return
	}
	c.errs = append(c.errs, &CompileError{Path: slices.Clone(c.path), Msg: fmt.Sprintf(format, args...)})
}

// flush emits the pending literal bytes as one operation.
func (c *compiler) flush() {
	if len(c.lit) > 0 {
		c.ops = append(c.ops, op{kind: opLit, lit: c.lit})
		c.lit = nil
	}
}

// emit appends a generator operation after the literal bytes before it.
func (c *compiler) emit(o op) {
	c.flush()
	c.ops = append(c.ops, o)
}

func (c *compiler) push(p any) { c.path = append(c.path, p) }
func (c *compiler) pop()       { c.path = c.path[:len(c.path)-1] }

// value compiles v at the current path, emitting literal bytes or operations.
// On an error it still emits a placeholder so the rest is checked too.
func (c *compiler) value(v any) {
	c.nodes++
	switch {
	case c.nodes > maxNodes:
		if !c.tooBig {
			c.tooBig = true
			c.errorf("template has more than %d values", maxNodes)
		}
	case c.depth >= maxDepth:
		if !c.tooDeep {
			c.tooDeep = true
			c.errorf("nested more than %d levels deep", maxDepth)
		}
	default:
		c.depth++
		c.node(v)
		c.depth--
		return
	}
	c.lit = append(c.lit, "null"...)
}

func (c *compiler) node(v any) {
	switch v := v.(type) {
	case nil:
		c.lit = append(c.lit, "null"...)
	case bool:
		c.lit = strconv.AppendBool(c.lit, v)
	case string:
		c.lit = wire.AppendString(c.lit, v)
	case int:
		c.lit = strconv.AppendInt(c.lit, int64(v), 10)
	case int8:
		c.lit = strconv.AppendInt(c.lit, int64(v), 10)
	case int16:
		c.lit = strconv.AppendInt(c.lit, int64(v), 10)
	case int32:
		c.lit = strconv.AppendInt(c.lit, int64(v), 10)
	case int64:
		c.lit = strconv.AppendInt(c.lit, v, 10)
	case uint:
		c.lit = strconv.AppendUint(c.lit, uint64(v), 10)
	case uint8:
		c.lit = strconv.AppendUint(c.lit, uint64(v), 10)
	case uint16:
		c.lit = strconv.AppendUint(c.lit, uint64(v), 10)
	case uint32:
		c.lit = strconv.AppendUint(c.lit, uint64(v), 10)
	case uint64:
		c.lit = strconv.AppendUint(c.lit, v, 10)
	case float32:
		c.float(float64(v), 32)
	case float64:
		c.float(v, 64)
	case json.Number:
		if !wire.IsNumber(string(v)) {
			c.errorf("%q is not a JSON number", string(v))
			c.lit = append(c.lit, "null"...)
			return
		}
		c.lit = append(c.lit, v...)
	case json.RawMessage:
		c.raw(v)
	case time.Time:
		c.lit = wire.AppendString(c.lit, v.Format(time.RFC3339Nano))
	case []any:
		c.lit = append(c.lit, '[')
		for i, e := range v {
			if i > 0 {
				c.lit = append(c.lit, ',')
			}
			c.push(i)
			c.value(e)
			c.pop()
		}
		c.lit = append(c.lit, ']')
	case map[string]any:
		c.mapping(v)
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			s, ok := k.(string)
			if !ok {
				c.errorf("mapping key %v is a %T; JSON object keys are strings (quote it)", k, k)
				continue
			}
			m[s] = e
		}
		c.mapping(m)
	default:
		c.errorf("unsupported value of type %T", v)
		c.lit = append(c.lit, "null"...)
	}
}

func (c *compiler) float(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		c.errorf("%v is not a JSON number", f)
		c.lit = append(c.lit, "null"...)
		return
	}
	c.lit = wire.AppendFloat(c.lit, f, bits)
}

func (c *compiler) raw(v json.RawMessage) {
	n := len(c.lit)
	var err error
	if c.lit, err = appendCompact(c.lit, v); err != nil {
		c.lit = append(c.lit[:n], "null"...)
		c.errorf("invalid raw JSON: %v", err)
	}
}

// mapping compiles a generator (one key, starting with a single "$") or a
// literal object.
func (c *compiler) mapping(m map[string]any) {
	keys := make([]string, 0, len(m))
	var gens []string
	for k := range m {
		keys = append(keys, k)
		if isGenKey(k) {
			gens = append(gens, k)
		}
	}
	if len(gens) > 0 {
		slices.Sort(gens)
		if len(m) == 1 {
			c.push(gens[0])
			c.generator(gens[0], m[gens[0]])
			c.pop()
			return
		}
		others := slices.DeleteFunc(slices.Clone(keys), isGenKey)
		slices.Sort(others)
		if len(others) == 0 { // only generators: each is next to the others
			others, gens = gens[1:], gens[:1]
		}
		c.errorf("a generator must be the only key of its mapping, but %s is next to %s (write $%s for a literal key)",
			strings.Join(gens, ", "), strings.Join(others, ", "), gens[0])
		c.lit = append(c.lit, "null"...)
		return
	}
	// Sort by the key as written to the output, like encoding/json.
	slices.SortFunc(keys, func(a, b string) int { return strings.Compare(literalKey(a), literalKey(b)) })
	c.lit = append(c.lit, '{')
	for i, k := range keys {
		if i > 0 {
			c.lit = append(c.lit, ',')
		}
		c.lit = wire.AppendString(c.lit, literalKey(k))
		c.lit = append(c.lit, ':')
		c.push(k)
		c.value(m[k])
		c.pop()
	}
	c.lit = append(c.lit, '}')
}

// isGenKey reports whether k names a generator: "$x" but not "$$x".
func isGenKey(k string) bool { return len(k) > 0 && k[0] == '$' && !strings.HasPrefix(k, "$$") }

// literalKey unescapes "$$x" to "$x".
func literalKey(k string) string {
	if strings.HasPrefix(k, "$$") {
		return k[1:]
	}
	return k
}
