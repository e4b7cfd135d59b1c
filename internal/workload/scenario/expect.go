package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// maxSchemaErrors bounds the problems reported for one result schema.
const maxSchemaErrors = 5

// expect reads a call's expectation: a mapping with at most one key.
func (p *parser) expect(n *yaml.Node, where string) Expect {
	var e Expect
	f := p.fields(n, where, expectKeys...)
	if len(f) > 1 {
		var first, second *yaml.Node
		for _, k := range expectKeys { // the two earliest keys in the file
			if v, ok := f[k]; ok {
				switch {
				case first == nil || before(v.key, first):
					first, second = v.key, first
				case second == nil || before(v.key, second):
					second = v.key
				}
			}
		}
		p.errorf(second, "%s: holds one expectation, but has both %s and %s (expected one of %s)", where, first.Value, second.Value, strings.Join(expectKeys, ", "))
	}
	if v, ok := f["result_equals_params"]; ok {
		e.ResultEqualsParams, _ = p.boolean(v.val, where+".result_equals_params")
	}
	if v, ok := f["error_code"]; ok {
		if c, ok := p.integer(v.val, where+".error_code"); ok {
			e.ErrorCode = &c
		}
	}
	if v, ok := f["result_equals"]; ok {
		if x, ok := p.value(v.val, where+".result_equals"); ok {
			b, err := json.Marshal(x)
			if err != nil {
				p.errorf(v.val, "%s.result_equals: %v", where, err)
			} else {
				e.ResultEquals = b
			}
		}
	}
	if v, ok := f["result"]; ok {
		e.Result, e.ResultSchemaJSON = p.schema(v.val, where+".result")
	}
	return e
}

// before reports whether a comes before b in the file.
func before(a, b *yaml.Node) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}

// schemaURL names a result schema inside the compiler; no other URL loads.
const schemaURL = "mem:///result.json"

// schema compiles a result schema (draft 2020-12 unless it says otherwise
// with $schema). References may point only inside the schema itself: no
// file or network is read. Problems are reported at the schema's keyword.
func (p *parser) schema(n *yaml.Node, where string) (*jsonschema.Schema, []byte) {
	r := resolve(n)
	if r == nil || r.Kind != yaml.MappingNode && r.ShortTag() != "!!bool" {
		p.errorf(n, "%s: expected a JSON Schema (a mapping, or true or false), got %s", where, kind(n))
		return nil, nil
	}
	x, ok := p.value(n, where)
	if !ok {
		return nil, nil
	}
	src, err := json.Marshal(x)
	if err != nil {
		p.errorf(n, "%s: %v", where, err)
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		p.errorf(n, "%s: %v", where, err)
		return nil, nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		p.errorf(n, "%s: %s", where, schemaMessage(err))
		return nil, nil
	}
	sch, err := c.Compile(schemaURL)
	if err == nil {
		return sch, src
	}
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		p.errorf(n, "%s: invalid JSON Schema: %s", where, schemaMessage(err))
		return nil, nil
	}
	var leaves []*jsonschema.ValidationError
	seen := map[string]bool{}
	for _, l := range schemaLeaves(ve, nil) { // one problem per location
		if loc := strings.Join(l.InstanceLocation, "/"); !seen[loc] {
			seen[loc] = true
			leaves = append(leaves, l)
		}
	}
	for i, l := range leaves {
		if i == maxSchemaErrors {
			p.errorf(n, "%s: %d more problems in the schema", where, len(leaves)-i)
			break
		}
		at := nodeAtPointer(n, l.InstanceLocation)
		loc := ""
		if len(l.InstanceLocation) > 0 {
			loc = " at /" + strings.Join(l.InstanceLocation, "/")
		}
		p.errorf(at, "%s: invalid JSON Schema%s: %s", where, loc, leafMessage(l))
	}
	return nil, nil
}

// schemaLeaves collects the innermost causes of a validation error.
func schemaLeaves(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = schemaLeaves(c, out)
	}
	return out
}

// leafMessage is the message of one schema problem, without the URL lines.
func leafMessage(e *jsonschema.ValidationError) string {
	msg := e.Error()
	if i := strings.LastIndex(msg, "': "); i >= 0 && strings.Contains(msg[:i], "at '") {
		msg = msg[i+3:]
	}
	return strings.TrimSpace(msg)
}

// schemaMessage strips the internal URL from a compiler error.
func schemaMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), schemaURL, "the schema")
	return strings.ReplaceAll(msg, "\n", "; ")
}

// nodeAtPointer follows JSON pointer tokens (keys, or indexes in lists)
// from n as far as the YAML goes.
func nodeAtPointer(n *yaml.Node, tokens []string) *yaml.Node {
	path := make([]any, len(tokens))
	cur := n
	for i, tok := range tokens {
		path[i] = tok
		if r := resolve(cur); r != nil && r.Kind == yaml.SequenceNode {
			if idx, err := strconv.Atoi(tok); err == nil {
				path[i] = idx
			}
		}
		cur = nodeAt(cur, path[i:i+1])
	}
	return cur
}
