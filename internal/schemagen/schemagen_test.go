package schemagen

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemas is the table the property tests run over: each kind of keyword
// the generator supports, alone and combined.
var schemas = []struct {
	name   string
	schema string
	noBad  bool // accepts everything: Invalid must say ErrNoInvalid
}{
	{name: "true", schema: `true`, noBad: true},
	{name: "empty", schema: `{}`, noBad: true},
	{name: "null", schema: `{"type":"null"}`},
	{name: "boolean", schema: `{"type":"boolean"}`},
	{name: "type list", schema: `{"type":["string","integer","null"]}`},
	{name: "integer range", schema: `{"type":"integer","minimum":-5,"maximum":5}`},
	{name: "integer exclusive", schema: `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":3}`},
	{name: "integer big", schema: `{"type":"integer","minimum":1e20}`},
	{name: "integer multipleOf", schema: `{"type":"integer","multipleOf":7,"minimum":10,"maximum":100}`},
	{name: "integer fractional bounds", schema: `{"type":"integer","minimum":0.5,"maximum":3.5}`},
	{name: "number range", schema: `{"type":"number","minimum":0.25,"exclusiveMaximum":1}`},
	{name: "number multipleOf decimal", schema: `{"type":"number","multipleOf":0.01,"minimum":0,"maximum":5}`},
	{name: "number unbounded", schema: `{"type":"number"}`},
	{name: "string lengths", schema: `{"type":"string","minLength":2,"maxLength":4}`},
	{name: "string long", schema: `{"type":"string","minLength":300}`},
	{name: "string address", schema: `{"type":"string","pattern":"^0x[0-9a-fA-F]{40}$"}`},
	{name: "string quantity", schema: `{"type":"string","pattern":"^0x([1-9a-f][0-9a-f]*|0)$"}`},
	{name: "string semver", schema: `{"type":"string","pattern":"^\\d+\\.\\d+\\.\\d+(-[a-z]+)?$","maxLength":20}`},
	{name: "string pattern and length", schema: `{"type":"string","pattern":"^[a-z]+$","minLength":12,"maxLength":14}`},
	{name: "string pattern unanchored", schema: `{"type":"string","pattern":"ab|cd"}`},
	{name: "format date-time", schema: `{"type":"string","format":"date-time"}`},
	{name: "format uuid", schema: `{"type":"string","format":"uuid"}`},
	{name: "format email", schema: `{"type":"string","format":"email"}`},
	{name: "format uri", schema: `{"type":"string","format":"uri"}`},
	{name: "format others", schema: `{"type":"array","prefixItems":[{"format":"date","type":"string"},{"format":"ipv4","type":"string"},{"format":"ipv6","type":"string"},{"format":"hostname","type":"string"}],"items":false,"minItems":4}`},
	{name: "enum", schema: `{"enum":["red","green",3,null]}`},
	{name: "const", schema: `{"const":{"a":[1,2]}}`},
	{name: "object", schema: `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":3}},"required":["name"],"additionalProperties":false}`},
	{name: "object additional schema", schema: `{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":{"type":"boolean"},"minProperties":3}`},
	{name: "object required not listed", schema: `{"type":"object","required":["x","y"],"maxProperties":3}`},
	{name: "patternProperties", schema: `{"type":"object","patternProperties":{"^n_":{"type":"number"}},"properties":{"n_a":{"minimum":5}},"required":["n_a"],"additionalProperties":false}`},
	{name: "dependentRequired", schema: `{"type":"object","properties":{"card":{"type":"string"},"cvv":{"type":"string","pattern":"^[0-9]{3}$"}},"required":["card"],"dependentRequired":{"card":["cvv"]}}`},
	{name: "array tuple", schema: `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":{"type":"boolean"},"minItems":2}`},
	{name: "array unique", schema: `{"type":"array","items":{"enum":[1,2,3,4]},"uniqueItems":true,"minItems":3}`},
	{name: "array contains", schema: `{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"contains":{"const":7},"maxItems":4}`},
	{name: "draft-07 tuple", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"number"}],"additionalItems":false}`},
	{name: "draft-07 definitions", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"pos":{"type":"integer","minimum":1}},"type":"object","properties":{"n":{"$ref":"#/definitions/pos"}},"required":["n"]}`},
	{name: "oneOf", schema: `{"oneOf":[{"type":"integer","multipleOf":2},{"type":"integer","multipleOf":3}]}`},
	{name: "anyOf", schema: `{"anyOf":[{"type":"string","maxLength":2},{"type":"boolean"}]}`},
	{name: "allOf", schema: `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"a":{"minimum":10},"b":{"type":"string"}},"required":["b"]}]}`},
	{name: "not", schema: `{"type":"integer","minimum":0,"maximum":4,"not":{"const":2}}`},
	{name: "if then else", schema: `{"type":"object","properties":{"kind":{"enum":["a","b"]},"n":{"type":"integer"}},"required":["kind","n"],"if":{"properties":{"kind":{"const":"a"}}},"then":{"properties":{"n":{"minimum":100}}},"else":{"properties":{"n":{"maximum":-100}}}}`},
	{name: "ref defs", schema: `{"$defs":{"addr":{"type":"string","pattern":"^0x[0-9a-f]{40}$"},"tx":{"type":"object","properties":{"from":{"$ref":"#/$defs/addr"},"to":{"$ref":"#/$defs/addr"},"value":{"type":"string","pattern":"^0x[0-9a-f]+$"}},"required":["from"]}},"type":"array","items":{"$ref":"#/$defs/tx"},"minItems":1}`},
	{name: "ref with siblings", schema: `{"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n","minimum":50,"maximum":60}`},
	{name: "recursive tree", schema: `{"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value"]}},"$ref":"#/$defs/node"}`},
	{name: "recursive root", schema: `{"type":"object","properties":{"next":{"$ref":"#"}},"required":[]}`},
	{name: "examples and default", schema: `{"type":"string","enum":["eth","btc","sol"],"default":"eth","examples":["btc"]}`},
	{name: "deep", schema: `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"array","items":{"type":"object","properties":{"d":{"type":"string","minLength":1}},"required":["d"]}}},"required":["c"]}},"required":["b"]}},"required":["a"]}`},
	{name: "mcp-like", schema: `{"type":"object","properties":{"query":{"type":"string","description":"search terms"},"limit":{"type":"integer","minimum":1,"maximum":50,"default":10},"filters":{"type":"object","properties":{"lang":{"type":"string","enum":["en","de"]},"since":{"type":"string","format":"date-time"}},"additionalProperties":false}},"required":["query"],"additionalProperties":false}`},
}

func compile(t testing.TB, schema string, formats bool) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	if formats {
		c.AssertFormat()
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

func validates(t testing.TB, s *jsonschema.Schema, value []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		t.Fatalf("generated bad JSON %s: %v", value, err)
	}
	return s.Validate(inst)
}

const seeds = 150

// TestValidValidates: every value Valid makes passes an independent
// validator (with format assertions on), for every schema and many seeds.
func TestValidValidates(t *testing.T) {
	for _, tc := range schemas {
		t.Run(tc.name, func(t *testing.T) {
			s := compile(t, tc.schema, true)
			for seed := range uint64(seeds) {
				v, err := Valid([]byte(tc.schema), rand.New(rand.NewPCG(seed, 1)))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if err := validates(t, s, v); err != nil {
					t.Fatalf("seed %d: %s does not validate: %v", seed, v, err)
				}
			}
		})
	}
}

// TestInvalidDoesNotValidate: every value Invalid makes fails the
// independent validator; schemas that accept everything say so.
func TestInvalidDoesNotValidate(t *testing.T) {
	for _, tc := range schemas {
		t.Run(tc.name, func(t *testing.T) {
			s := compile(t, tc.schema, false)
			broken := map[string]int{}
			for seed := range uint64(seeds) {
				v, broke, err := InvalidWith([]byte(tc.schema), rand.New(rand.NewPCG(seed, 2)))
				if tc.noBad {
					if !errors.Is(err, ErrNoInvalid) {
						t.Fatalf("seed %d: want ErrNoInvalid, got %s, %v", seed, v, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if validates(t, s, v) == nil {
					t.Fatalf("seed %d: %s (broke %s) validates", seed, v, broke)
				}
				broken[broke]++
			}
			if testing.Verbose() {
				t.Logf("%v", broken)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	for _, tc := range schemas {
		a, errA := Valid([]byte(tc.schema), rand.New(rand.NewPCG(7, 7)))
		b, errB := Valid([]byte(tc.schema), rand.New(rand.NewPCG(7, 7)))
		if !bytes.Equal(a, b) || (errA == nil) != (errB == nil) {
			t.Errorf("%s: Valid differs for one seed: %s / %s", tc.name, a, b)
		}
		a, wa, _ := InvalidWith([]byte(tc.schema), rand.New(rand.NewPCG(7, 7)))
		b, wb, _ := InvalidWith([]byte(tc.schema), rand.New(rand.NewPCG(7, 7)))
		if !bytes.Equal(a, b) || wa != wb {
			t.Errorf("%s: Invalid differs for one seed: %s / %s", tc.name, a, b)
		}
	}
}

// TestPatternFallback: a pattern the generator cannot read (lookahead is
// ECMA-262, not Go syntax) falls back to the examples and says so, or fails
// when there is none.
func TestPatternFallback(t *testing.T) {
	v, notes, err := ValidNotes([]byte(`{"type":"string","pattern":"^(?=x)x+$","examples":["xx"]}`), rand.New(rand.NewPCG(1, 1)))
	if err != nil || string(v) != `"xx"` {
		t.Fatalf("got %s, %v", v, err)
	}
	if len(notes) == 0 || !strings.Contains(strings.Join(notes, ";"), "example") {
		t.Errorf("notes %q do not mention the fallback", notes)
	}
	if _, err := Valid([]byte(`{"type":"string","pattern":"^(?=x)x+$"}`), rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("no error for a pattern without examples")
	}
}
