package gen

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestLiterals(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"null", nil, `null`},
		{"sorted keys, nested", decode(t, `{"b":1,"a":[true,null,"x\ny"]}`), `{"a":[true,null,"x\ny"],"b":1}`},
		{"$$ escapes a literal $ key", map[string]any{"$$ref": "lit", "a": 1}, `{"$ref":"lit","a":1}`},
		{"$$ alone in its mapping", map[string]any{"$$gt": 5}, `{"$gt":5}`},
		{"$$$ keeps the rest", map[string]any{"$$$x": 1}, `{"$$x":1}`},
		{"a $ string value is literal", []any{"$int", "$"}, `["$int","$"]`},
		{"escaping", []any{"\"\\\u0001</>\u2028", "\xff"}, `["\"\\\u0001</>\u2028","\ufffd"]`},
		{"integer kinds", []any{int8(-8), int16(16), int32(-32), int64(math.MinInt64), uint(1), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64)},
			`[-8,16,-32,-9223372036854775808,1,8,16,32,18446744073709551615]`},
		{"floats like encoding/json", []any{1e6, 1.5, 1e21, 1e-7, math.Copysign(0, -1), float32(0.1), 3.0}, `[1000000,1.5,1e+21,1e-7,-0,0.1,3]`},
		{"json.Number", []any{json.Number("-12.5e3")}, `[-12.5e3]`},
		{"json.RawMessage is compacted", json.RawMessage(` { "a" : [ 1 , 2 ] } `), `{"a":[1,2]}`},
		{"time", time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC), `"2024-01-02T03:04:05.000000006Z"`},
		{"map[any]any from YAML", map[any]any{"k": []any{1}}, `{"k":[1]}`},
		{"empty containers", []any{[]any{}, map[string]any{}}, `[[],{}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := mustCompile(t, tc.v, nil)
			static, ok := tmpl.Static()
			if !ok || string(static) != tc.want {
				t.Fatalf("Static() = %s, %v; want %s", static, ok, tc.want)
			}
			if got := gen(t, tmpl, 1, 1); string(got) != tc.want {
				t.Fatalf("Append = %s; want %s", got, tc.want)
			}
		})
	}
}

func TestGeneratorIsNotStatic(t *testing.T) {
	tmpl := mustCompile(t, decode(t, `[1,{"$seq":{}}]`), nil)
	if b, ok := tmpl.Static(); ok || b != nil {
		t.Fatalf("Static() = %s, %v for a template with a generator", b, ok)
	}
}

var (
	uuidRE   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	addrRE   = regexp.MustCompile(`^0x[0-9a-f]{40}$`)
	qtyRE    = regexp.MustCompile(`^0x(0|[1-9a-f][0-9a-f]*)$`)
	alnumRE  = regexp.MustCompile(`^[a-zA-Z0-9]*$`)
	rfc3339N = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`)
)

// TestGenerators runs each generator for many sequence numbers: the output is
// valid JSON within bounds, the same seed and seq give the same bytes, and
// (for the random ones) different seqs give different values.
func TestGenerators(t *testing.T) {
	cases := []struct {
		name   string
		tmpl   any
		random bool
		check  func(t *testing.T, seq uint64, v any) // v decoded with UseNumber
	}{
		{"int", decode(t, `{"$int":[-5,5]}`), true, func(t *testing.T, _ uint64, v any) {
			if n := mustInt(t, v); n < -5 || n > 5 {
				t.Fatalf("%d out of [-5, 5]", n)
			}
		}},
		{"int single value", map[string]any{"$int": []any{7, int64(7)}}, false, func(t *testing.T, _ uint64, v any) {
			if n := mustInt(t, v); n != 7 {
				t.Fatalf("%d, want 7", n)
			}
		}},
		{"int whole int64 range", map[string]any{"$int": []any{int64(math.MinInt64), int64(math.MaxInt64)}}, true, func(t *testing.T, _ uint64, v any) { mustInt(t, v) }},
		{"float", decode(t, `{"$float":[1.5,2.5]}`), true, func(t *testing.T, _ uint64, v any) {
			if f := mustFloat(t, v); f < 1.5 || f >= 2.5 {
				t.Fatalf("%v out of [1.5, 2.5)", f)
			}
		}},
		{"float huge range", decode(t, `{"$float":[-1e300,1e300]}`), true, func(t *testing.T, _ uint64, v any) { mustFloat(t, v) }},
		{"float min == max", decode(t, `{"$float":[2,2]}`), false, func(t *testing.T, _ uint64, v any) {
			if f := mustFloat(t, v); f != 2 {
				t.Fatalf("%v, want 2", f)
			}
		}},
		{"string N", decode(t, `{"$string":12}`), true, func(t *testing.T, _ uint64, v any) {
			if s := v.(string); len(s) != 12 || !alnumRE.MatchString(s) {
				t.Fatalf("%q: want 12 of [a-zA-Z0-9]", s)
			}
		}},
		{"string len", decode(t, `{"$string":{"len":3,"alphabet":"xy"}}`), true, func(t *testing.T, _ uint64, v any) {
			if s := v.(string); len(s) != 3 || strings.Trim(s, "xy") != "" {
				t.Fatalf("%q: want 3 of x, y", s)
			}
		}},
		{"string min max", decode(t, `{"$string":{"min":2,"max":4}}`), true, func(t *testing.T, _ uint64, v any) {
			if s := v.(string); len(s) < 2 || len(s) > 4 || !alnumRE.MatchString(s) {
				t.Fatalf("%q: want 2 to 4 of [a-zA-Z0-9]", s)
			}
		}},
		{"string max only", decode(t, `{"$string":{"max":1}}`), true, func(t *testing.T, _ uint64, v any) {
			if s := v.(string); len(s) > 1 {
				t.Fatalf("%q: want at most 1", s)
			}
		}},
		{"string escaped alphabet", decode(t, `{"$string":{"len":8,"alphabet":"é\"\n\\"}}`), true, func(t *testing.T, _ uint64, v any) {
			if s := v.(string); utf8.RuneCountInString(s) != 8 || strings.Trim(s, "é\"\n\\") != "" {
				t.Fatalf("%q: want 8 of é \" newline backslash", s)
			}
		}},
		{"choice", decode(t, `{"$choice":["latest","pending"]}`), true, func(t *testing.T, _ uint64, v any) {
			if v != "latest" && v != "pending" {
				t.Fatalf("%v", v)
			}
		}},
		{"choice of templates", decode(t, `{"$choice":[{"$int":[1,3]},"x",[{"$choice":[true]}]]}`), true, func(t *testing.T, _ uint64, v any) {
			switch v := v.(type) {
			case json.Number:
				if n := mustInt(t, v); n < 1 || n > 3 {
					t.Fatalf("%d out of [1, 3]", n)
				}
			case string:
				if v != "x" {
					t.Fatalf("%q", v)
				}
			case []any:
				if len(v) != 1 || v[0] != true {
					t.Fatalf("%v", v)
				}
			default:
				t.Fatalf("%T %v", v, v)
			}
		}},
		{"weighted", decode(t, `{"$weighted":[{"weight":0,"value":"never"},{"weight":3,"value":"a"},{"weight":0.5,"value":{"$int":[1,2]}},{"weight":0,"value":"never"}]}`), true,
			func(t *testing.T, _ uint64, v any) {
				if v == "never" {
					t.Fatal("a zero-weight value was chosen")
				}
			}},
		{"seq", decode(t, `{"$seq":{"start":10,"step":5}}`), false, func(t *testing.T, seq uint64, v any) {
			if n := mustInt(t, v); n != 10+int64(seq-1)*5 {
				t.Fatalf("seq %d: %d", seq, n)
			}
		}},
		{"seq defaults", decode(t, `{"$seq":{}}`), false, func(t *testing.T, seq uint64, v any) {
			if n := mustInt(t, v); n != int64(seq) {
				t.Fatalf("seq %d: %d", seq, n)
			}
		}},
		{"seq start", decode(t, `{"$seq":-3}`), false, func(t *testing.T, seq uint64, v any) {
			if n := mustInt(t, v); n != int64(seq)-4 {
				t.Fatalf("seq %d: %d", seq, n)
			}
		}},
		{"uuid", decode(t, `{"$uuid":"v4"}`), true, func(t *testing.T, _ uint64, v any) {
			if !uuidRE.MatchString(v.(string)) {
				t.Fatalf("%v is not a v4 UUID", v)
			}
		}},
		{"hex bytes", decode(t, `{"$hex":{"bytes":20}}`), true, func(t *testing.T, _ uint64, v any) {
			if !addrRE.MatchString(v.(string)) {
				t.Fatalf("%v is not 20 bytes of hex", v)
			}
		}},
		{"hex shorthand, odd length", decode(t, `{"$hex":13}`), true, func(t *testing.T, _ uint64, v any) {
			if s := v.(string); len(s) != 28 || !qtyRE.MatchString("0x1"+s[2:]) {
				t.Fatalf("%v is not 13 bytes of hex", v)
			}
		}},
		{"hex zero bytes", decode(t, `{"$hex":{"bytes":0}}`), false, func(t *testing.T, _ uint64, v any) {
			if v != "0x" {
				t.Fatalf("%v, want 0x", v)
			}
		}},
		{"hexint", decode(t, `{"$hexint":["0x10",32]}`), true, func(t *testing.T, _ uint64, v any) {
			if n := mustQty(t, v); n < 16 || n > 32 {
				t.Fatalf("%v out of [0x10, 0x20]", v)
			}
		}},
		{"hexint zero", decode(t, `{"$hexint":[0,"0x0"]}`), false, func(t *testing.T, _ uint64, v any) {
			if v != "0x0" {
				t.Fatalf("%v, want 0x0", v)
			}
		}},
		{"hexint whole range", map[string]any{"$hexint": []any{0, "0xffffffffffffffff"}}, true, func(t *testing.T, _ uint64, v any) { mustQty(t, v) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := mustCompile(t, tc.tmpl, nil)
			distinct := map[string]bool{}
			for seq := uint64(1); seq <= 300; seq++ {
				out := gen(t, tmpl, 42, seq)
				if again := gen(t, tmpl, 42, seq); !bytes.Equal(out, again) {
					t.Fatalf("seq %d: %s then %s with the same seed", seq, out, again)
				}
				distinct[string(out)] = true
				d := json.NewDecoder(bytes.NewReader(out))
				d.UseNumber()
				var v any
				if err := d.Decode(&v); err != nil {
					t.Fatal(err)
				}
				tc.check(t, seq, v)
			}
			if tc.random && len(distinct) < 2 {
				t.Fatalf("300 seqs gave one value: %v", distinct)
			}
		})
	}
}

func mustInt(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%T %v is not a number", v, v)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		t.Fatalf("%v is not an int64", n)
	}
	return i
}

func mustFloat(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%T %v is not a number", v, v)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustQty(t *testing.T, v any) uint64 {
	t.Helper()
	s, _ := v.(string)
	if !qtyRE.MatchString(s) {
		t.Fatalf("%v is not an Ethereum quantity", v)
	}
	n, err := strconv.ParseUint(s[2:], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDistributions checks that the bounds are reached and the weights are
// honoured, which the per-value checks cannot see.
func TestDistributions(t *testing.T) {
	count := func(tmpl string, n int) map[string]int {
		c := map[string]int{}
		compiled := mustCompile(t, decode(t, tmpl), nil)
		for seq := uint64(1); seq <= uint64(n); seq++ {
			c[string(gen(t, compiled, 7, seq))]++
		}
		return c
	}
	if c := count(`{"$int":[1,3]}`, 3000); len(c) != 3 || c["1"] < 800 || c["3"] < 800 {
		t.Errorf("$int [1, 3] over 3000: %v", c)
	}
	if c := count(`{"$hexint":[0,2]}`, 3000); len(c) != 3 || c[`"0x0"`] < 800 || c[`"0x2"`] < 800 {
		t.Errorf("$hexint [0, 2] over 3000: %v", c)
	}
	c := count(`{"$weighted":[{"weight":3,"value":"a"},{"weight":1,"value":"b"}]}`, 4000)
	if a := c[`"a"`]; a < 2800 || a > 3200 || a+c[`"b"`] != 4000 {
		t.Errorf("3:1 weights over 4000: %v", c)
	}
}

// TestDifferentSeedsDiffer: the seed, not only seq, drives the draws.
func TestDifferentSeedsDiffer(t *testing.T) {
	tmpl := mustCompile(t, decode(t, `[{"$uuid":"v4"},{"$hex":32}]`), nil)
	if a, b := gen(t, tmpl, 1, 5), gen(t, tmpl, 2, 5); bytes.Equal(a, b) {
		t.Fatalf("seeds 1 and 2 gave %s", a)
	}
}

func TestNowUsesTheInjectedClock(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 8900, time.FixedZone("X", 3600))
	tmpl := mustCompile(t, decode(t, `[{"$now":"unix"},{"$now":"unixms"},{"$now":"unixns"},{"$now":"rfc3339"}]`), nil)
	tmpl.SetClock(func() time.Time { return at })
	want := `[` + strconv.FormatInt(at.Unix(), 10) + `,` + strconv.FormatInt(at.UnixMilli(), 10) + `,` +
		strconv.FormatInt(at.UnixNano(), 10) + `,"2025-03-04T04:06:07.000008900Z"]`
	if got := gen(t, tmpl, 1, 1); string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	tmpl.SetClock(nil) // back to time.Now
	var v []any
	if err := json.Unmarshal(gen(t, tmpl, 1, 1), &v); err != nil {
		t.Fatal(err)
	}
	if !rfc3339N.MatchString(v[3].(string)) {
		t.Fatalf("rfc3339: %v", v[3])
	}
	if sec := int64(v[0].(float64)); time.Since(time.Unix(sec, 0)) > time.Minute {
		t.Fatalf("unix %d is not now", sec)
	}
}

// TestConstantRunsAreMerged: constant parts around generators are one copy
// each, which is what makes Append mostly copying.
func TestConstantRunsAreMerged(t *testing.T) {
	tmpl := mustCompile(t, decode(t, `{"a":[1,2,{"$int":[1,1]}],"b":{"c":"d"},"e":{"$choice":["x","y"]}}`), nil)
	var kinds []opKind
	for _, o := range tmpl.ops {
		kinds = append(kinds, o.kind)
	}
	want := []opKind{opLit, opInt, opLit, opChoiceLit, opLit}
	if !slices.Equal(kinds, want) {
		t.Fatalf("ops %v, want %v", kinds, want)
	}
}
