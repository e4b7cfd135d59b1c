package schemagen

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

const edgeDraws = 500

// edgeCase is one edge ValidEdges must produce for a schema within
// edgeDraws draws.
type edgeCase struct {
	name string
	is   func(v any) bool
}

// edgeSchemas pairs schemas with the edges that must show up among their
// values: the assertions that matter, since a generator of plausible
// values would pass the validity tests too.
var edgeSchemas = []struct {
	name   string
	schema string
	edges  []edgeCase
}{
	{"string", `{"type":"string"}`, []edgeCase{
		{"empty", isStr(func(s string) bool { return s == "" })},
		{"long (1,000+ runes)", isStr(func(s string) bool { return utf8.RuneCountInString(s) >= 1000 })},
		{"non-ASCII", isStr(hasRune(func(r rune) bool { return r >= utf8.RuneSelf && !unicode.IsSpace(r) }))},
		{"outside the BMP", isStr(hasRune(func(r rune) bool { return r > 0xffff }))},
		{"combining mark", isStr(hasRune(func(r rune) bool { return unicode.Is(unicode.Mn, r) }))},
		{"right-to-left", isStr(hasRune(func(r rune) bool { return unicode.In(r, unicode.Hebrew, unicode.Arabic) }))},
		{"control character", isStr(hasRune(func(r rune) bool { return r < 0x20 && r != ' ' }))},
		{"NUL", isStr(func(s string) bool { return strings.ContainsRune(s, 0) })},
		{"whitespace only", isStr(func(s string) bool { return s != "" && strings.TrimFunc(s, unicode.IsSpace) == "" })},
		{"number or keyword", isStr(func(s string) bool { return slices.Contains(keywordStrings, s) })},
	}},
	{"string lengths", `{"type":"string","minLength":3,"maxLength":20}`, []edgeCase{
		{"minLength", isStr(func(s string) bool { return utf8.RuneCountInString(s) == 3 })},
		{"maxLength", isStr(func(s string) bool { return utf8.RuneCountInString(s) == 20 })},
	}},
	{"string pattern", `{"type":"string","pattern":"^a+b*$"}`, []edgeCase{
		{"shortest match", isStr(func(s string) bool { return s == "a" })},
		{"long match", isStr(func(s string) bool { return len(s) >= 20 })},
	}},
	{"format date-time", `{"type":"string","format":"date-time"}`, []edgeCase{
		{"epoch", isStr(func(s string) bool { return s == "1970-01-01T00:00:00Z" })},
		{"year 9999", isStr(func(s string) bool { return strings.HasPrefix(s, "9999-") })},
	}},
	{"integer unbounded", `{"type":"integer"}`, []edgeCase{
		isNum("2^63-1", "9223372036854775807"), isNum("-2^63", "-9223372036854775808"),
		isNum("2^64", "18446744073709551616"), isNum("2^53+1", "9007199254740993"),
		isNum("2^31-1", "2147483647"), isNum("-2^31", "-2147483648"),
		isNum("0", "0"), isNum("-1", "-1"), isNum("1", "1"),
	}},
	{"integer bounded", `{"type":"integer","minimum":-5,"maximum":5}`, []edgeCase{
		isNum("minimum", "-5"), isNum("maximum", "5"), isNum("0", "0"),
	}},
	{"integer exclusive", `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10}`, []edgeCase{
		isNum("inside exclusiveMinimum", "1"), isNum("inside exclusiveMaximum", "9"),
	}},
	{"integer half-open", `{"type":"integer","minimum":0}`, []edgeCase{
		isNum("minimum", "0"), isNum("2^63-1", "9223372036854775807"),
	}},
	{"integer multipleOf", `{"type":"integer","multipleOf":7,"maximum":1000}`, []edgeCase{
		isNum("largest multiple", "994"), isNum("-7", "-7"), isNum("-2^63 (a multiple of 7 just above)", "-9223372036854775807"),
	}},
	{"number unbounded", `{"type":"number"}`, []edgeCase{
		isNum("0.5", "0.5"), isNum("-0.5", "-0.5"), isNum("1e-7", "0.0000001"),
		isNum("large fraction", "1000000000000000.5"), isNum("2^53+1", "9007199254740993"),
	}},
	{"number exclusive", `{"type":"number","exclusiveMinimum":0,"maximum":1}`, []edgeCase{
		isNum("inside exclusiveMinimum", "0.000001"), isNum("maximum", "1"), isNum("0.5", "0.5"),
	}},
	{"number multipleOf", `{"type":"number","multipleOf":0.25,"minimum":-1.1}`, []edgeCase{
		isNum("minimum", "-1"), isNum("0.5", "0.5"), isNum("-0.25", "-0.25"),
	}},
	{"array of numbers", `{"type":"array","items":{"type":"number"}}`, []edgeCase{
		{"empty", isArr(func(a []any) bool { return len(a) == 0 })},
		{"1,001 items", isArr(func(a []any) bool { return len(a) == 1001 })},
		{"5,000 items", isArr(func(a []any) bool { return len(a) == 5000 })},
	}},
	{"array bounded", `{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":7}`, []edgeCase{
		{"minItems", isArr(func(a []any) bool { return len(a) == 2 })},
		{"maxItems", isArr(func(a []any) bool { return len(a) == 7 })},
	}},
	{"array maxItems 10000", `{"type":"array","items":{"type":"string"},"maxItems":10000}`, []edgeCase{
		{"maxItems", isArr(func(a []any) bool { return len(a) == 10000 })},
	}},
	{"object", `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["id"]}`, []edgeCase{
		{"only required", isObj(func(o map[string]any) bool { return len(o) == 1 && has(o, "id") })},
		{"every property", isObj(func(o map[string]any) bool { return has(o, "id") && has(o, "name") && has(o, "tags") })},
		{"__proto__ member", isObj(func(o map[string]any) bool { return has(o, "__proto__") })},
		{"empty name", isObj(func(o map[string]any) bool { return has(o, "") })},
		{"non-ASCII name", isObj(func(o map[string]any) bool { return has(o, "ключ") || has(o, "🔑") || has(o, "名前") })},
	}},
	{"unevaluatedProperties", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true,"unevaluatedProperties":false}`, []edgeCase{
		{"only required", isObj(func(o map[string]any) bool { return len(o) == 0 })},
		{"every property", isObj(func(o map[string]any) bool { return len(o) == 1 })},
	}},
	{"unevaluatedItems", `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"unevaluatedItems":false}`, []edgeCase{
		{"empty", isArr(func(a []any) bool { return len(a) == 0 })},
		{"the tuple", isArr(func(a []any) bool { return len(a) == 2 })},
	}},
	{"enum", `{"enum":["first","b","c","d","e","f","g","last"]}`, []edgeCase{
		{"first", func(v any) bool { return v == "first" }},
		{"last", func(v any) bool { return v == "last" }},
		{"middle", func(v any) bool { return v == "d" }},
	}},
	{"const with exponent", `{"const":[1e3,-0.0,2.5E-3]}`, []edgeCase{
		{"written plainly", func(v any) bool {
			a, _ := v.([]any)
			return len(a) == 3 && a[0] == json.Number("1000") && a[1] == json.Number("0") && a[2] == json.Number("0.0025")
		}},
	}},
	{"anything", `true`, []edgeCase{
		{"empty array", isArr(func(a []any) bool { return len(a) == 0 })},
		{"empty object", isObj(func(o map[string]any) bool { return len(o) == 0 })},
		{"2^63-1", isNum("", "9223372036854775807").is},
	}},
	{"nested unbounded arrays", `{"type":"array","items":{"type":"array","items":{"type":"string"}}}`, []edgeCase{
		{"long outer", isArr(func(a []any) bool { return len(a) >= 1001 })},
		{"long inner", isArr(func(a []any) bool {
			return slices.ContainsFunc(a, func(e any) bool { i, _ := e.([]any); return len(i) >= 1001 })
		})},
	}},
}

func isStr(f func(string) bool) func(any) bool {
	return func(v any) bool { s, ok := v.(string); return ok && f(s) }
}

func hasRune(f func(rune) bool) func(string) bool {
	return func(s string) bool { return strings.IndexFunc(s, f) >= 0 }
}

func isArr(f func([]any) bool) func(any) bool {
	return func(v any) bool { a, ok := v.([]any); return ok && f(a) }
}

func isObj(f func(map[string]any) bool) func(any) bool {
	return func(v any) bool { o, ok := v.(map[string]any); return ok && f(o) }
}

func has(o map[string]any, k string) bool {
	_, ok := o[k]
	return ok
}

func isNum(name, n string) edgeCase {
	return edgeCase{name, func(v any) bool { return v == json.Number(n) }}
}

// TestValidEdgesAppear: over edgeDraws values of each schema of the edge
// table, every value passes the independent validator (formats asserted)
// and keeps plainOutput's promises, and each edge class shows up.
func TestValidEdgesAppear(t *testing.T) {
	for _, tc := range edgeSchemas {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := compile(t, tc.schema, true)
			seen := make([]int, len(tc.edges))
			for seed := range uint64(edgeDraws) {
				b, err := ValidEdges([]byte(tc.schema), rand.New(rand.NewPCG(seed, 3)))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				v := plainOutput(t, b)
				if err := s.Validate(v); err != nil {
					t.Fatalf("seed %d: %.300s does not validate: %v", seed, b, err)
				}
				for i, e := range tc.edges {
					if e.is(v) {
						seen[i]++
					}
				}
			}
			for i, e := range tc.edges {
				if seen[i] == 0 {
					t.Errorf("edge %q never produced in %d draws", e.name, edgeDraws)
				}
				if testing.Verbose() {
					t.Logf("%s: %d/%d", e.name, seen[i], edgeDraws)
				}
			}
		})
	}
}

// TestValidEdgesEnumBias: the first and the last member of an enum come
// up more often than a middle one.
func TestValidEdgesEnumBias(t *testing.T) {
	schema := []byte(`{"enum":[0,1,2,3,4,5,6,7,8,9]}`)
	count := map[string]int{}
	for seed := range uint64(edgeDraws) {
		v, err := ValidEdges(schema, rand.New(rand.NewPCG(seed, 4)))
		if err != nil {
			t.Fatal(err)
		}
		count[string(v)]++
	}
	if count["0"] < 3*count["5"] || count["9"] < 3*count["5"] {
		t.Errorf("first and last not favoured: %v", count)
	}
}

var (
	exponent  = regexp.MustCompile(`[0-9][eE][-+]?[0-9]`)
	surrogate = regexp.MustCompile(`\\u[dD][89abAB]`)
)

// plainOutput checks what ValidEdges promises of every value beyond
// validity: valid UTF-8 JSON without lone surrogates, at most about 1 MiB,
// numbers without exponents and never -0. It returns the value decoded as
// the validator decodes it (objects as maps, numbers as json.Number).
func plainOutput(t testing.TB, value []byte) any {
	t.Helper()
	if !json.Valid(value) || !utf8.Valid(value) || surrogate.Match(value) {
		t.Fatalf("not valid UTF-8 JSON: %.200q", value)
	}
	if len(value) > 1<<20 {
		t.Fatalf("%d bytes", len(value))
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case json.Number:
			if exponent.MatchString(string(x)) || (strings.HasPrefix(string(x), "-") && strings.Trim(string(x), "-0.") == "") {
				t.Fatalf("number %s in %.200s", x, value)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return v
}

// TestValidEdgesValidates: every value ValidEdges makes for the
// property-test table passes the independent validator (formats asserted)
// and keeps plainOutput's promises, over as many seeds as
// TestValidValidates (the edge table is held to the same in
// TestValidEdgesAppear, over edgeDraws).
func TestValidEdgesValidates(t *testing.T) {
	for _, tc := range schemas {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := compile(t, tc.schema, true)
			for seed := range uint64(seeds) {
				v, err := ValidEdges([]byte(tc.schema), rand.New(rand.NewPCG(seed, 1)))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if err := validates(t, s, v); err != nil {
					t.Fatalf("seed %d: %.300s does not validate: %v", seed, v, err)
				}
				plainOutput(t, v)
			}
		})
	}
}

func TestValidEdgesDeterministic(t *testing.T) {
	for _, tc := range schemas {
		a, errA := ValidEdges([]byte(tc.schema), rand.New(rand.NewPCG(7, 7)))
		b, errB := ValidEdges([]byte(tc.schema), rand.New(rand.NewPCG(7, 7)))
		if !bytes.Equal(a, b) || (errA == nil) != (errB == nil) {
			t.Errorf("%s: ValidEdges differs for one seed: %.100s / %.100s", tc.name, a, b)
		}
	}
}

func TestPlainNumber(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"0", "0", true},
		{"-0", "0", true},
		{"-0.000e5", "0", true},
		{"12", "12", true},
		{"1e3", "1000", true},
		{"1E+3", "1000", true},
		{"-1.5e-3", "-0.0015", true},
		{"123.4500", "123.45", true},
		{"12.5e1", "125", true},
		{"0.0125e2", "1.25", true},
		{"5e-1", "0.5", true},
		{"1e400", "1" + strings.Repeat("0", 400), true},
		{"1e401", "1e401", false},
	} {
		got, ok := plainNumber(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("plainNumber(%s) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// mcpSchema is a typical MCP tool inputSchema.
const mcpSchema = `{"type":"object","properties":{"query":{"type":"string","description":"search terms"},"limit":{"type":"integer","minimum":1,"maximum":100},"tags":{"type":"array","items":{"type":"string"}}},"required":["query","limit"],"additionalProperties":false}`

func BenchmarkValidEdges(b *testing.B) {
	b.ReportAllocs()
	r := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		if _, err := ValidEdges([]byte(mcpSchema), r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValid(b *testing.B) {
	b.ReportAllocs()
	r := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		if _, err := Valid([]byte(mcpSchema), r); err != nil {
			b.Fatal(err)
		}
	}
}

func TestJSONLen(t *testing.T) {
	for _, s := range []string{`null`, `true`, `false`, `-1.5`, `"a\"b\\c\n\t\r\u0000\u007f é 😀"`, `[]`, `{}`,
		`[1,"x",{"a":[null,{}],"":"\u001f"}]`, `{"k":{"l":[[],[true,false]]}}`} {
		v, err := parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonLen(v), len(appendJSON(nil, v)); got != want {
			t.Errorf("jsonLen(%s) = %d, want %d", s, got, want)
		}
	}
	if got := jsonLen("\xff"); got != len(appendJSON(nil, "\xff")) {
		t.Errorf("jsonLen of invalid UTF-8 = %d", got)
	}
}
