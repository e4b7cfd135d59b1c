package schemagen

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzGenerate: any bytes as a schema never panic, finish quickly, and
// whatever comes out is JSON that the package's own checker judges as
// promised (Valid, InvalidWith and ValidEdges, whose values also keep
// plainOutput's promises).
func FuzzGenerate(f *testing.F) {
	for _, tc := range schemas {
		f.Add([]byte(tc.schema), uint64(1))
	}
	f.Add([]byte(`{"$ref":"#"}`), uint64(2))
	f.Add([]byte(`{"anyOf":[{"$ref":"#"}]}`), uint64(3))
	f.Add([]byte(`{"type":"string","pattern":"a{1000}{1000}"}`), uint64(4))
	f.Add([]byte(`{"type":"integer","minimum":1e400,"multipleOf":1e-400}`), uint64(5))
	f.Add([]byte(`{"type":"array","minItems":1e9}`), uint64(6))
	for _, tc := range edgeSchemas {
		f.Add([]byte(tc.schema), uint64(7))
	}
	f.Add([]byte(`{"enum":[1e999,-0,1e-400]}`), uint64(8))
	f.Add([]byte(`{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"string"}}}}`), uint64(9))
	f.Fuzz(func(t *testing.T, schema []byte, seed uint64) {
		if len(schema) > 1<<14 {
			return
		}
		start := time.Now()
		v, err := Valid(schema, rand.New(rand.NewPCG(seed, 0)))
		if err == nil {
			checkOwn(t, schema, v, true)
		}
		bad, _, err := InvalidWith(schema, rand.New(rand.NewPCG(seed, 1)))
		if err == nil {
			checkOwn(t, schema, bad, false)
		}
		edge, err := ValidEdges(schema, rand.New(rand.NewPCG(seed, 2)))
		if err == nil {
			checkOwn(t, schema, edge, true)
			plainOutput(t, edge)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

func checkOwn(t *testing.T, schema, value []byte, want bool) {
	t.Helper()
	if !json.Valid(value) {
		t.Fatalf("not JSON: %q", value)
	}
	d, err := newDoc(schema)
	if err != nil {
		t.Fatal(err)
	}
	v, err := parse(value)
	if err != nil {
		t.Fatal(err)
	}
	c := newChecker(d)
	if got := c.valid(d.root, v); got != want && !c.exhausted {
		t.Fatalf("value %s: checker says valid=%v, want %v", value, got, want)
	}
}

// TestBounded: schemas that ask for too much end with an error (or a value)
// quickly rather than running on.
func TestBounded(t *testing.T) {
	for _, s := range []string{
		`{"type":"array","minItems":10000,"uniqueItems":true,"items":{"type":"integer"}}`,
		`{"type":"array","minItems":10000,"items":{"type":"array","minItems":10000}}`,
		`{"anyOf":[{"anyOf":[{"anyOf":[{"$ref":"#"},{"$ref":"#"}]},{"$ref":"#"}]},{"$ref":"#"}]}`,
		`{"type":"object","properties":{"a":{"$ref":"#"},"b":{"$ref":"#"},"c":{"$ref":"#"}},"required":["a","b","c"]}`,
		`{"type":"string","pattern":"^(a|b|c){1000}$","maxLength":10}`,
		`{"type":"string","minLength":100000}`,
		`{"type":"object","minProperties":10000,"additionalProperties":{"type":"string","minLength":100}}`,
		`{"oneOf":[{"type":"array","items":{"$ref":"#"},"minItems":3},{"type":"integer"}]}`,
		`{"type":"integer","minimum":1e400}`,
	} {
		start := time.Now()
		_, _ = Valid([]byte(s), rand.New(rand.NewPCG(1, 1)))
		_, _, _ = InvalidWith([]byte(s), rand.New(rand.NewPCG(1, 1)))
		for seed := range uint64(2) {
			_, _ = ValidEdges([]byte(s), rand.New(rand.NewPCG(seed, 1)))
		}
		if d := time.Since(start); d > 20*time.Second { // a hang, not a slow machine
			t.Errorf("%s: took %v", s, d)
		}
	}
}
