package apispec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rpcload/rpcload/internal/wire"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind is what a Method calls.
type Kind uint8

// The kinds of methods.
const (
	// Plain is a JSON-RPC method: its params are the schema's value.
	Plain Kind = iota
	// Tool is an MCP tool: tools/call with {name, arguments}, the
	// schema being the inputSchema of arguments.
	Tool
	// Prompt is an MCP prompt: prompts/get with {name, arguments}.
	Prompt
)

// String names the kind as reports do.
func (k Kind) String() string {
	switch k {
	case Tool:
		return "tool"
	case Prompt:
		return "prompt"
	}
	return "method"
}

// MarshalText writes the kind as String does.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (k *Kind) UnmarshalText(b []byte) error {
	for _, c := range []Kind{Plain, Tool, Prompt} {
		if c.String() == string(b) {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("apispec: unknown kind %q", b)
}

// Method is one thing a client can call.
type Method struct {
	// Name is what reports call it: the method's name, or "tool NAME",
	// "prompt NAME".
	Name string `json:"name"`
	// Call is the JSON-RPC method a frame carries (tools/call for a tool).
	Call string `json:"call"`
	Kind Kind   `json:"kind"`
	// Target is the tool's or the prompt's name ("" for a plain method).
	Target string `json:"target,omitempty"`
	// Params is the JSON Schema of the params (of arguments for a tool or
	// a prompt); nil when nothing describes them.
	Params json.RawMessage `json:"params,omitempty"`
	// Positional says the params are an array (OpenRPC's by-position):
	// absent params are then read as [], else as {}.
	Positional bool `json:"positional,omitempty"`
	// Result is the JSON Schema the result must validate against (for a
	// tool, its outputSchema, which structuredContent must match); nil:
	// none declared.
	Result json.RawMessage `json:"result,omitempty"`
	// Idempotent says two equal calls get equal results: declared
	// (OpenRPC's x-idempotent) or given (--idempotent).
	Idempotent bool `json:"idempotent,omitempty"`
	// Examples are params known to be good (given on the command line).
	Examples []json.RawMessage `json:"examples,omitempty"`
	// Template, when set, renders params known to be good, new ones each
	// time (a scenario call's params template): Propose draws valid params
	// from it as from the examples.
	Template Template `json:"-"`
	// Source says where the method came from: "openrpc", "mcp", "flag".
	Source string `json:"source"`

	// forms are the schemas Params is either of (OpenRPC's "either": the
	// by-position array and the by-name object), for proposing invalid
	// params of one form: Params' anyOf has no other invalid arrays or
	// objects to offer.
	forms          [][]byte
	params, result *jsonschema.Schema // compiled (nil: not described, or did not compile)
	index          int                // its place in API.Methods
}

// Template renders params: rpcload's scenario templates (workload/gen)
// are ones. It must be safe for concurrent use; ok is false when it has
// nothing left to render.
type Template interface {
	Append(dst []byte, r *rand.Rand, seq uint64) (out []byte, ok bool)
}

// API is the methods of a target. The zero value is empty and ready.
type API struct {
	Methods []*Method
	// Notes say what was left out of the sources and why, and which
	// schemas did not compile (their methods are called, not judged).
	Notes []string
	index map[string]int
}

func key(call, target string) string { return call + "\x00" + target }

// Add adds m, compiling its schemas (one that does not compile is dropped
// with a note: the method is still called, its params or result not
// judged). A method added again (same call and target) is merged: its
// examples join the earlier ones, and a schema it has replaces the earlier
// one's absence, so a --method seed adds to what OpenRPC said.
func (a *API) Add(m Method) error {
	if m.Call == "" {
		return errors.New("apispec: a method needs a name")
	}
	if m.Name == "" {
		m.Name = m.Call
		if m.Kind != Plain {
			m.Name = m.Kind.String() + " " + m.Target
		}
	}
	for _, s := range []struct {
		src  *json.RawMessage
		out  **jsonschema.Schema
		what string
	}{{&m.Params, &m.params, "params"}, {&m.Result, &m.result, "result"}} {
		if *s.src == nil {
			continue
		}
		sch, err := CompileSchema(*s.src)
		if err != nil {
			a.Notes = append(a.Notes, fmt.Sprintf("%s: the %s schema does not compile, so it is not judged: %v", m.Name, s.what, err))
			*s.src = nil
			continue
		}
		*s.out = sch
	}
	if a.index == nil {
		a.index = map[string]int{}
	}
	k := key(m.Call, m.Target)
	if i, ok := a.index[k]; ok {
		old := a.Methods[i]
		old.Examples = append(old.Examples, m.Examples...)
		if old.Template == nil {
			old.Template = m.Template
		}
		old.Idempotent = old.Idempotent || m.Idempotent
		if old.params == nil {
			old.Params, old.params, old.Positional = m.Params, m.params, m.Positional
		}
		if old.result == nil {
			old.Result, old.result = m.Result, m.result
		}
		return nil
	}
	a.index[k] = len(a.Methods)
	m.index = len(a.Methods)
	a.Methods = append(a.Methods, &m)
	return nil
}

// Index is m's place in its API's Methods.
func (m *Method) Index() int { return m.index }

// Merge adds every method and note of b.
func (a *API) Merge(b *API) error {
	a.Notes = append(a.Notes, b.Notes...)
	for _, m := range b.Methods {
		if err := a.Add(*m); err != nil {
			return err
		}
	}
	return nil
}

// Len is the number of methods.
func (a *API) Len() int {
	if a == nil {
		return 0
	}
	return len(a.Methods)
}

// SetIdempotent marks the methods named (by Name or by Call) idempotent;
// it returns the names that match none.
func (a *API) SetIdempotent(names []string) (unknown []string) {
	for _, n := range names {
		found := false
		for _, m := range a.Methods {
			if m.Name == n || m.Kind == Plain && m.Call == n {
				m.Idempotent, found = true, true
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	return unknown
}

// Names returns the methods' names, sorted.
func (a *API) Names() []string {
	out := make([]string, 0, a.Len())
	for _, m := range a.Methods {
		out = append(out, m.Name)
	}
	slices.Sort(out)
	return out
}

// Frame appends to dst the request calling m with id (raw JSON, as
// written in the frame) and params (the arguments, for a tool or a prompt;
// nil: none), one line of JSON.
func (m *Method) Frame(dst, id []byte, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = wire.AppendString(dst, m.Call)
	if p := m.CallParams(params); p != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, p...)
	}
	return append(dst, '}')
}

// CallParams returns the JSON-RPC params of a call of m with params (the
// arguments, for a tool or a prompt, wrapped in {name, arguments}); nil
// for none.
func (m *Method) CallParams(params []byte) []byte {
	if m.Kind == Plain {
		return params
	}
	p := wire.AppendString([]byte(`{"name":`), m.Target)
	if params != nil {
		p = append(append(p, `,"arguments":`...), params...)
	}
	return append(p, '}')
}

// Find returns the method a scanned request calls and the params it
// carries (the arguments, for a tool or a prompt; nil when absent). ok is
// false when the frame calls nothing of the API, or when it is ambiguous:
// a params member the lookup reads ("name", "arguments") written twice.
func (a *API) Find(m *wire.Message) (meth *Method, params []byte, ok bool) {
	if a.Len() == 0 || m.Method == nil {
		return nil, nil, false
	}
	var buf [64]byte
	name, ok := wire.Unquote(buf[:0], m.Method)
	if !ok {
		return nil, nil, false
	}
	if i, found := a.index[key(string(name), "")]; found {
		return a.Methods[i], m.Params, true
	}
	it, ok := wire.ObjectMembers(m.Params)
	if !ok {
		return nil, nil, false
	}
	var target, args []byte
	nameSeen, argsSeen := false, false
	for n, v, more := it.Next(); more; n, v, more = it.Next() {
		switch {
		case string(n) == `"name"`:
			if nameSeen {
				return nil, nil, false
			}
			nameSeen = true
			if target, ok = wire.Unquote(nil, v); !ok {
				return nil, nil, false
			}
		case string(n) == `"arguments"`:
			if argsSeen {
				return nil, nil, false
			}
			argsSeen, args = true, v
		}
	}
	if it.Malformed() || !nameSeen {
		return nil, nil, false
	}
	i, found := a.index[key(string(name), string(target))]
	if !found {
		return nil, nil, false
	}
	return a.Methods[i], args, true
}

// Verdict is what a schema says of a value.
type Verdict uint8

// The verdicts.
const (
	// NotJudged: no schema, or a value a server could read otherwise
	// than the validator (see the package doc).
	NotJudged Verdict = iota
	Valid
	Invalid
)

// CheckParams judges params (as Find returned them: nil when absent)
// against m's params schema; why names the first problem of invalid
// params.
func (m *Method) CheckParams(params []byte) (v Verdict, why string) {
	if m.params == nil {
		return NotJudged, ""
	}
	if params == nil {
		params = []byte("{}")
		if m.Positional {
			params = []byte("[]")
		}
	}
	return judge(m.params, params)
}

// CheckResult judges a result (the raw JSON of the reply's result member)
// against m's result schema. For a tool, the schema is the outputSchema
// and the value structuredContent; a tool error (isError true) is not
// judged, and a missing structuredContent is Invalid: MCP wants one
// whenever an outputSchema is declared.
func (m *Method) CheckResult(result []byte) (v Verdict, why string) {
	if m.result == nil || result == nil {
		return NotJudged, ""
	}
	if m.Kind == Tool {
		if ToolError(result) {
			return NotJudged, ""
		}
		sc, ok := wire.Member(result, `"structuredContent"`)
		if !ok {
			return Invalid, "no structuredContent, though the tool declares an outputSchema"
		}
		v, why := judge(m.result, sc)
		if why != "" {
			why = "structuredContent: " + why
		}
		return v, why
	}
	return judge(m.result, result)
}

// judge validates value against sch, when value is plain enough for the
// verdict to be a server's too.
func judge(sch *jsonschema.Schema, value []byte) (Verdict, string) {
	if !Unambiguous(value) {
		return NotJudged, ""
	}
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return NotJudged, ""
	}
	if err := sch.Validate(x); err != nil {
		return Invalid, validationMessage(err)
	}
	return Valid, ""
}

// validationMessage is the first leaf of a validation error, where it is
// and what is wrong, on one line.
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return oneLine(err.Error())
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	// (The leaf's own text is "at '/x': problem", after a line naming
	// the schema's internal URL, which says nothing to a reader.)
	msg := ve.Error()
	if i := strings.LastIndex(msg, "': "); i >= 0 && strings.Contains(msg[:i], "at '") {
		msg = msg[i+3:]
	}
	return oneLine("at /" + strings.Join(ve.InstanceLocation, "/") + ": " + msg)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// FromJSON reads an API written with encoding/json (its Methods as a JSON
// array), compiling the schemas again: what a finding's directory keeps so
// that its replay judges the call as the run did.
func FromJSON(data []byte) (*API, error) {
	var ms []Method
	if err := json.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("apispec: %w", err)
	}
	api := &API{}
	for _, m := range ms {
		if err := api.Add(m); err != nil {
			return nil, err
		}
	}
	return api, nil
}

// ToolError reports whether an MCP tools/call result is a tool error
// (isError true): the tool's refusal, not a result to judge.
func ToolError(result []byte) bool {
	e, ok := wire.Member(result, `"isError"`)
	return ok && bytes.Equal(wire.TrimSpace(e), []byte("true"))
}
