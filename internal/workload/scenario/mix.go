package scenario

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/workload/gen"
)

// Bounds of the mix.
const (
	maxTimeouts = 8      // distinct timeouts per scenario (the run's and the calls')
	maxBatch    = 100000 // requests per batch
)

var (
	callKeys   = []string{"method", "name", "weight", "params", "notify", "batch", "timeout", "id_reuse", "expect", "raw", "mutate"}
	mutateKeys = []string{"fraction", "ops"}
	// rawExcludes are the keys a raw call cannot have: its frame is sent
	// as it is.
	rawExcludes = []string{"method", "params", "notify", "batch", "id_reuse", "expect", "mutate"}
	expectKeys  = []string{"result_equals_params", "result", "error_code", "result_equals"}
)

// mix reads the list of calls.
func (p *parser) mix(n *yaml.Node, s *Scenario, failed map[string]bool) []Call {
	items, ok := p.list(n, "mix")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		p.errorf(n, "mix: expected at least one call")
		return nil
	}
	names := map[string]int{} // call name → line of its first use
	timeouts := map[time.Duration]bool{}
	if s.Load.Timeout > 0 {
		timeouts[s.Load.Timeout] = true
	}
	out := make([]Call, 0, len(items))
	for i, it := range items {
		where := "mix[" + strconv.Itoa(i) + "]"
		f := p.fields(it, where, callKeys...)
		if f == nil {
			continue
		}
		c := Call{Weight: 1}
		m, hasMethod := f["method"]
		raw, hasRaw := f["raw"]
		switch {
		case hasRaw:
			c.Raw = p.raw(raw.val, where+".raw")
			c.Name = "raw" + strconv.Itoa(i+1)
			m = raw
			for _, k := range rawExcludes {
				if v, ok := f[k]; ok {
					p.errorf(v.key, "%s.%s: a raw call sends its frame as it is, without %s", where, k, k)
				}
			}
		case hasMethod:
			c.Method, _ = p.nonEmpty(m.val, where+".method")
			c.Name = c.Method
		default:
			p.errorf(it, "%s: missing method (the JSON-RPC method to call), or raw (a frame to send as it is)", where)
		}
		nameNode := m.val
		if v, ok := f["name"]; ok {
			c.Name, _ = p.nonEmpty(v.val, where+".name")
			nameNode = v.val
		}
		if c.Name != "" {
			if line, dup := names[c.Name]; dup {
				p.errorf(nameNode, "%s: the call name %q is already used by the call at line %d; give each call a distinct name (it names the call's statistics)", where, c.Name, line)
			}
			names[c.Name] = resolve(it).Line
			where += " (" + clip(c.Name) + ")"
		}
		if v, ok := f["weight"]; ok {
			c.Weight, _ = p.positive(v.val, where+".weight", false)
		}
		if v, ok := f["notify"]; ok {
			c.Notify, _ = p.boolean(v.val, where+".notify")
		}
		if v, ok := f["batch"]; ok {
			c.Batch, _ = p.intIn(v.val, where+".batch", 1, maxBatch)
			switch {
			case c.Notify:
				p.errorf(v.key, "%s.batch: a batch of notifications gets no reply at all; rpcload batches requests (use notify without batch)", where)
			case s.Profile.Name == string(profile.MCP):
				p.errorf(v.key, "%s.batch: the mcp profile sends no batches (MCP removed them in 2025-06-18)", where)
			}
		}
		if v, ok := f["timeout"]; ok {
			if c.Timeout, ok = p.duration(v.val, where+".timeout", false); ok && !timeouts[c.Timeout] {
				timeouts[c.Timeout] = true
				if len(timeouts) > maxTimeouts {
					p.errorf(v.val, "%s.timeout: more than %d distinct timeouts in the scenario (load.timeout counts too); reuse one of them", where, maxTimeouts)
				}
			}
		}
		if v, ok := f["id_reuse"]; ok {
			c.IDReuse, _ = p.boolean(v.val, where+".id_reuse")
			switch {
			case c.IDReuse && c.Notify:
				p.errorf(v.key, "%s.id_reuse: a notification has no id to reuse", where)
			case c.IDReuse && f["batch"].key != nil:
				p.errorf(v.key, "%s.id_reuse: the id-reuse probe sends single requests, not batches", where)
			}
		}
		if v, ok := f["params"]; ok {
			c.Params = p.params(v.val, where+".params", s, failed)
		} else if s.Profile.Name == string(profile.LSP) && s.Profile.Open != "" && strings.HasPrefix(c.Method, "textDocument/") {
			// A request about the opened document needs only its uri
			// (documentSymbol, foldingRange, codeLens, ...).
			c.Params, _ = gen.Compile(map[string]any{"textDocument": map[string]any{"uri": profile.FileURI(s.Profile.Open)}}, nil)
		}
		if v, ok := f["mutate"]; ok && !hasRaw {
			c.Mutate = p.mutate(v.val, where+".mutate")
			if c.Mutate != nil && (c.IDReuse || c.Batch > 1) {
				p.errorf(v.key, "%s.mutate: mutate takes single requests and notifications, not the id-reuse probe or batches", where)
			}
		}
		if v, ok := f["expect"]; ok {
			c.Expect = p.expect(v.val, where+".expect")
			switch {
			case c.Notify:
				p.errorf(v.key, "%s.expect: a notification gets no reply, so there is nothing to expect", where)
			case c.IDReuse:
				p.errorf(v.key, "%s.expect: the id-reuse probe's outcome is reported on its own, not checked against expectations", where)
			case c.Expect.ResultEqualsParams && f["params"].key == nil:
				p.errorf(v.key, "%s.expect: result_equals_params needs params to compare the result with", where)
			}
		}
		out = append(out, c)
	}
	return out
}

// raw reads a raw frame: a string, sent as its UTF-8 bytes, or
// {base64: TEXT} for any bytes.
func (p *parser) raw(n *yaml.Node, where string) []byte {
	r := resolve(n)
	if r != nil && r.Kind == yaml.MappingNode {
		f := p.fields(n, where, "base64")
		v, ok := f["base64"]
		if !ok {
			p.errorf(n, "%s: expected a string, or a mapping with base64", where)
			return nil
		}
		text, ok := p.str(v.val, where+".base64")
		if !ok {
			return nil
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
		if err != nil {
			p.errorf(v.val, "%s.base64: %v", where, err)
			return nil
		}
		if len(b) == 0 {
			p.errorf(v.val, "%s.base64: the frame is empty", where)
		}
		return b
	}
	s, ok := p.str(n, where)
	if !ok {
		return nil
	}
	if s == "" {
		p.errorf(n, "%s: the frame is empty", where)
		return nil
	}
	return []byte(s)
}

// mutate reads a call's mutate: {fraction: F, ops: [NAME, ...]}; F is a
// number above 0 and at most 1, or a percentage such as "5%".
func (p *parser) mutate(n *yaml.Node, where string) *Mutation {
	f := p.fields(n, where, mutateKeys...)
	if f == nil {
		return nil
	}
	m := &Mutation{}
	v, ok := f["fraction"]
	if !ok {
		p.errorf(n, "%s: missing fraction (the share of the call's requests to make malformed, e.g. 5%%)", where)
		return nil
	}
	if r := resolve(v.val); r != nil && r.Kind == yaml.ScalarNode && strings.HasSuffix(r.Value, "%") {
		pct, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(r.Value, "%")), 64)
		if err != nil {
			p.errorf(v.val, "%s.fraction: %q is not a percentage", where, r.Value)
			return nil
		}
		m.Fraction = pct / 100
	} else if m.Fraction, ok = p.number(v.val, where+".fraction"); !ok {
		return nil
	}
	if !(m.Fraction > 0 && m.Fraction <= 1) {
		p.errorf(v.val, "%s.fraction: must be above 0 and at most 1 (100%%), got %g", where, m.Fraction)
		return nil
	}
	if v, ok := f["ops"]; ok {
		items, _ := p.list(v.val, where+".ops")
		for k, it := range items {
			if name, ok := p.nonEmpty(it, fmt.Sprintf("%s.ops[%d]", where, k)); ok {
				m.Ops = append(m.Ops, name)
			}
		}
	}
	return m
}

// scalarGens are the generators that always produce a scalar, so they
// cannot stand for all of the params.
var scalarGens = []string{"$int", "$float", "$string", "$seq", "$uuid", "$hex", "$hexint", "$now"}

// params reads and compiles a call's params template.
func (p *parser) params(n *yaml.Node, where string, s *Scenario, failed map[string]bool) *gen.Template {
	r := resolve(n)
	if r == nil || r.Kind != yaml.MappingNode && r.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list or a mapping (JSON-RPC params are an array or an object), got %s; leave params out for none", where, kind(n))
		return nil
	}
	generator := ""
	if r.Kind == yaml.MappingNode && len(r.Content) == 2 {
		if k := r.Content[0].Value; strings.HasPrefix(k, "$") && !strings.HasPrefix(k, "$$") {
			generator = k
			if slices.Contains(scalarGens, k) {
				p.errorf(r.Content[0], "%s: %s makes a single value, but params must be an array or an object; put it in a list or a mapping", where, k)
				return nil
			}
		}
	}
	v, ok := p.value(n, where)
	if !ok {
		return nil
	}
	if m, isMap := v.(map[string]any); isMap && generator == "" && s.Profile.Name == string(profile.LSP) && s.Profile.Open != "" {
		if _, has := m["textDocument"]; !has {
			m["textDocument"] = map[string]any{"uri": profile.FileURI(s.Profile.Open)}
		}
	}
	t, err := gen.Compile(v, s.Feeders)
	if err != nil {
		p.compileErrors(n, where, err, failed)
		return nil
	}
	if b, static := t.Static(); static && (len(b) == 0 || b[0] != '[' && b[0] != '{') {
		p.errorf(n, "%s: must produce a JSON array or object", where)
		return nil
	}
	return t
}

// compileErrors reports the errors of gen.Compile at the nodes their paths
// lead to: one *gen.CompileError, or several joined. A $feed naming a
// feeder in failed (one that could not be loaded, already reported) is not
// reported again.
func (p *parser) compileErrors(n *yaml.Node, where string, err error, failed map[string]bool) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			p.compileErrors(n, where, e, failed)
		}
		return
	}
	var ce *gen.CompileError
	if !errors.As(err, &ce) {
		p.errorf(n, "%s: %v", where, err)
		return
	}
	at := nodeAt(n, ce.Path)
	if k := len(ce.Path); k > 0 && ce.Path[k-1] == "$feed" {
		if r := resolve(at); r != nil && r.Kind == yaml.ScalarNode {
			if name, _, _ := strings.Cut(r.Value, "."); failed[name] {
				return
			}
		}
	}
	p.errorf(at, "%s%s: %s", where, pathText(ce.Path), ce.Msg)
}

// nodeAt follows path (string keys, int indexes) from n as far as the YAML
// goes and returns the node reached.
func nodeAt(n *yaml.Node, path []any) *yaml.Node {
	for _, step := range path {
		r := resolve(n)
		if r == nil {
			return n
		}
		next := (*yaml.Node)(nil)
		switch s := step.(type) {
		case string:
			if r.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(r.Content); i += 2 {
					if resolve(r.Content[i]).Value == s {
						next = r.Content[i+1]
					}
				}
			}
		case int:
			if r.Kind == yaml.SequenceNode && s >= 0 && s < len(r.Content) {
				next = r.Content[s]
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// pathText formats path as .key[1].key for messages.
func pathText(path []any) string {
	var b strings.Builder
	for _, step := range path {
		switch s := step.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			b.WriteByte('.')
			b.WriteString(clip(s))
		default:
			fmt.Fprintf(&b, ".%v", s)
		}
	}
	return b.String()
}
