package discover

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/rpcload/rpcload/internal/workload/scenario"
)

// TestScenarioReaderAccepts: the scenario reader loads every written file,
// and the params its templates produce (the real generators, many requests)
// validate against the schemas they came from.
func TestScenarioReaderAccepts(t *testing.T) {
	ordoc, _ := parseJSON(read(t, "openrpc.json"))
	components := get(ordoc, "components")
	toolDoc, _ := parseJSON(read(t, "tools.json"))

	// the schema of the whole params of each call, as an array or object schema
	want := map[string]*jsonschema.Schema{}
	for _, m := range get(ordoc, "methods").Content {
		name, _ := getStr(m, "name")
		byName := false
		if ps, _ := getStr(m, "paramStructure"); ps == "by-name" {
			byName = true
		}
		whole := mapping("type", str("array"))
		items := seq()
		props := mapping()
		for _, p := range get(m, "params").Content {
			p = descriptor(p, get(components, "contentDescriptors"))
			pname, _ := getStr(p, "name")
			sc := selfContained(get(p, "schema"), schemaRefPrefix, get(components, "schemas"))
			items.Content = append(items.Content, sc)
			props.Content = append(props.Content, str(pname), sc)
		}
		if byName {
			whole = mapping("type", str("object"), "properties", props)
		} else if len(items.Content) > 0 {
			whole.Content = append(whole.Content, str("prefixItems"), items)
		}
		whole.Content = append(whole.Content, str("$defs"), mapping())
		hoistDefs(whole)
		want[name] = compileSchema(t, toJSON(whole))
	}
	for _, tool := range get(toolDoc, "tools").Content {
		name, _ := getStr(tool, "name")
		whole := mapping("type", str("object"), "properties", mapping("name", mapping("const", str(name)), "arguments", get(tool, "inputSchema")))
		hoistDefs(whole)
		want[name] = compileSchema(t, toJSON(whole))
	}

	for _, tc := range cases {
		for seed := range uint64(10) {
			out, err := tc.make(t, seed)
			if err != nil {
				t.Fatal(err)
			}
			s, err := scenario.Parse(tc.golden, out, ".", func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatalf("%s seed %d: the scenario reader refuses it: %v\n%s", tc.golden, seed, err, out)
			}
			r := rand.New(rand.NewPCG(seed, 5))
			for _, c := range s.Mix {
				if c.Params == nil {
					continue
				}
				sch := want[c.Name]
				for i := range uint64(20) {
					b, ok := c.Params.Append(nil, r, i+1)
					if !ok {
						t.Fatalf("%s: template ended", c.Name)
					}
					inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
					if err != nil {
						t.Fatalf("%s: %s: %v", c.Name, b, err)
					}
					if err := sch.Validate(inst); err != nil {
						var pretty bytes.Buffer
						_ = json.Indent(&pretty, b, "", " ")
						t.Errorf("%s seed %d: %s does not validate: %v", c.Name, seed, b, err)
					}
				}
			}
		}
	}
}

// hoistDefs moves the $defs and definitions of nested schemas to the root,
// so schemas put side by side keep their references working.
func hoistDefs(root *yaml.Node) {
	var walk func(n *yaml.Node, top bool)
	walk = func(n *yaml.Node, top bool) {
		for _, c := range n.Content {
			walk(c, false)
		}
		if top || n.Kind != yaml.MappingNode {
			return
		}
		for _, kw := range []string{"$defs", "definitions"} {
			if d := get(n, kw); d != nil {
				rd := get(root, kw)
				if rd == nil {
					rd = mapping()
					root.Content = append(root.Content, str(kw), rd)
				}
				for i := 0; i+1 < len(d.Content); i += 2 {
					if get(rd, d.Content[i].Value) == nil {
						rd.Content = append(rd.Content, d.Content[i], d.Content[i+1])
					}
				}
			}
		}
	}
	walk(root, true)
}
