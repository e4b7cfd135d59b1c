package discover

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// expand turns a template node of the output into a JSON value: literals as
// they are ("$$" keys unescaped), generators by the scenario format's rules,
// drawing from r (ends of ranges included).
func expand(t *testing.T, n *yaml.Node, r *rand.Rand) any {
	t.Helper()
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 2 && strings.HasPrefix(n.Content[0].Value, "$") && !strings.HasPrefix(n.Content[0].Value, "$$") {
			return generate(t, n.Content[0].Value, n.Content[1], r)
		}
		m := map[string]any{}
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if strings.HasPrefix(k, "$$") {
				k = k[1:]
			}
			m[k] = expand(t, n.Content[i+1], r)
		}
		return m
	case yaml.SequenceNode:
		a := []any{}
		for _, c := range n.Content {
			a = append(a, expand(t, c, r))
		}
		return a
	}
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func pick(r *rand.Rand, lo, hi int64) int64 {
	switch r.IntN(3) {
	case 0:
		return lo
	case 1:
		return hi
	}
	return lo + r.Int64N(hi-lo+1)
}

func generate(t *testing.T, name string, arg *yaml.Node, r *rand.Rand) any {
	t.Helper()
	ints := func() (int64, int64) {
		var b [2]int64
		if err := arg.Decode(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b[0], b[1]
	}
	switch name {
	case "$int":
		lo, hi := ints()
		return pick(r, lo, hi)
	case "$hexint":
		lo, hi := ints()
		return "0x" + strconv.FormatInt(pick(r, lo, hi), 16)
	case "$choice":
		return expand(t, arg.Content[r.IntN(len(arg.Content))], r)
	case "$uuid":
		return "5b3d1c2e-8f4a-4b6c-9d0e-1f2a3b4c5d6e"
	case "$now":
		return time.Now().UTC().Format(time.RFC3339)
	case "$hex":
		var a struct{ Bytes int }
		if err := arg.Decode(&a); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, a.Bytes)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return "0x" + hex.EncodeToString(b)
	case "$string":
		var a struct{ Min, Max int64 }
		if err := arg.Decode(&a); err != nil {
			t.Fatal(err)
		}
		return strings.Repeat("aZ9", int(a.Max))[:pick(r, a.Min, a.Max)]
	}
	t.Fatalf("unexpected generator %s", name)
	return nil
}

func compileSchema(t *testing.T, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	return s
}

func checkValue(t *testing.T, what string, schema *jsonschema.Schema, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err := schema.Validate(inst); err != nil {
		t.Errorf("%s: %s does not validate: %v", what, b, err)
	}
}

// mixOf re-parses a written scenario with yaml.v3 and returns its calls.
func mixOf(t *testing.T, out []byte) []*yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	mix := get(doc.Content[0], "mix")
	if mix == nil || mix.Kind != yaml.SequenceNode {
		t.Fatalf("no mix:\n%s", out)
	}
	return mix.Content
}

// TestOpenRPCValuesValidate: for many seeds, every param written (literals
// and, expanded a few ways, generators) validates against the param's schema
// in the document, and every expect schema compiles.
func TestOpenRPCValuesValidate(t *testing.T) {
	src := read(t, "openrpc.json")
	doc, err := parseJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	components := get(doc, "components")
	methods := map[string]*yaml.Node{}
	for _, m := range get(doc, "methods").Content {
		name, _ := getStr(m, "name")
		methods[name] = m
	}
	for seed := range uint64(30) {
		out, err := FromOpenRPC(src, "", rand.New(rand.NewPCG(seed, 9)))
		if err != nil {
			t.Fatal(err)
		}
		calls := mixOf(t, out)
		if len(calls) != len(methods)-1 {
			t.Fatalf("%d calls for %d methods (rpc.discover left out)", len(calls), len(methods))
		}
		for _, c := range calls {
			name, _ := getStr(c, "method")
			m := methods[name]
			if strings.HasPrefix(name, "rpc.") || m == nil {
				t.Fatalf("call of %q", name)
			}
			params := get(c, "params")
			for i, p := range get(m, "params").Content {
				p = descriptor(p, get(components, "contentDescriptors"))
				pname, _ := getStr(p, "name")
				var v *yaml.Node
				if ps, _ := getStr(m, "paramStructure"); ps == "by-name" {
					key := pname
					if strings.HasPrefix(key, "$") {
						key = "$" + key
					}
					v = get(params, key)
				} else {
					v = params.Content[i]
				}
				if v == nil {
					t.Fatalf("%s: param %s missing", name, pname)
				}
				sc := compileSchema(t, toJSON(selfContained(get(p, "schema"), schemaRefPrefix, get(components, "schemas"))))
				r := rand.New(rand.NewPCG(seed, 3))
				for range 5 {
					checkValue(t, fmt.Sprintf("seed %d %s %s", seed, name, pname), sc, expand(t, v, r))
				}
			}
			if e := get(get(c, "expect"), "result"); e != nil {
				var schema any
				if err := e.Decode(&schema); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(schema)
				compileSchema(t, b)
			}
		}
	}
}

// TestMCPValuesValidate: the same for tools/call arguments against each
// tool's inputSchema.
func TestMCPValuesValidate(t *testing.T) {
	src := read(t, "tools.json")
	doc, err := parseJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range get(doc, "tools").Content {
		name, _ := getStr(tool, "name")
		schemas[name] = compileSchema(t, toJSON(get(tool, "inputSchema")))
	}
	for seed := range uint64(30) {
		out, err := FromMCP(MCPLists{Tools: src}, "", "", rand.New(rand.NewPCG(seed, 9)))
		if err != nil {
			t.Fatal(err)
		}
		calls := mixOf(t, out)
		if len(calls) != len(schemas) {
			t.Fatalf("%d calls for %d tools", len(calls), len(schemas))
		}
		for _, c := range calls {
			params := get(c, "params")
			tool, _ := getStr(params, "name")
			if m, _ := getStr(c, "method"); m != "tools/call" {
				t.Fatalf("method %q", m)
			}
			if n, _ := getStr(c, "name"); n != tool {
				t.Fatalf("call name %q for tool %q", n, tool)
			}
			r := rand.New(rand.NewPCG(seed, 3))
			for range 5 {
				checkValue(t, fmt.Sprintf("seed %d %s", seed, tool), schemas[tool], expand(t, get(params, "arguments"), r))
			}
		}
	}
}
