package gen

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestCompileErrors: each problem names its path from the root (so the
// scenario loader can point at a YAML line and column) and what was expected.
func TestCompileErrors(t *testing.T) {
	feeders := map[string]*Feeder{"addrs": mustLoad(t, "addrs.csv", addrsCSV, "sequential")}
	cases := []struct {
		name string
		v    any
		path string // CompileError.Path, formatted
		msg  string // a substring of the message
	}{
		{"unknown generator", decode(t, `{"$foo":1}`), "$foo", "unknown generator $foo; known generators: " + knownGenerators + " (write $$foo for a literal key)"},
		{"generator next to other keys", decode(t, `{"$int":[1,2],"b":1,"a":2}`), "", "a generator must be the only key of its mapping, but $int is next to a, b (write $$int for a literal key)"},
		{"two generators in one mapping", decode(t, `{"$int":[1,2],"$float":[0,1]}`), "", "a generator must be the only key of its mapping, but $float is next to $int (write $$float for a literal key)"},
		{"nested path", decode(t, `{"a":[1,{"b":{"$int":[2,1]}}]}`), "a[1].b.$int", "min 2 is greater than max 1"},
		{"odd key quoted", decode(t, `{"a b":{"$int":"x"}}`), `["a b"].$int`, `expected [min, max], e.g. {$int: [1, 100]}; got "x"`},
		{"int one bound", decode(t, `{"$int":[1]}`), "$int", "expected [min, max]"},
		{"int not an integer", decode(t, `{"$int":[1,"x"]}`), "$int[1]", `expected an integer, got "x"`},
		{"int fraction", decode(t, `{"$int":[1.5,2]}`), "$int[0]", "expected an integer, got 1.5"},
		{"int beyond int64", map[string]any{"$int": []any{0, uint64(math.MaxUint64)}}, "$int[1]", "expected an integer, got 1.8446744073709552e+19"},
		{"float order", decode(t, `{"$float":[2,1]}`), "$float", "min 2 is greater than max 1"},
		{"float too wide", decode(t, `{"$float":[-1.7e308,1.7e308]}`), "$float", "wider than a float64 can hold"},
		{"float not a number", decode(t, `{"$float":[0,null]}`), "$float[1]", "expected a finite number, got null"},
		{"float infinite", map[string]any{"$float": []any{0, math.Inf(1)}}, "$float[1]", "expected a finite number, got +Inf"},
		{"string negative", decode(t, `{"$string":-1}`), "$string", "expected a length from 0 to 1048576"},
		{"string too long", decode(t, `{"$string":2000000}`), "$string", "got 2e+06"},
		{"string len and max", decode(t, `{"$string":{"len":3,"max":4}}`), "$string", "give either len or min/max, not both"},
		{"string min only", decode(t, `{"$string":{"min":3}}`), "$string", "expected len or max (and optionally min)"},
		{"string min above max", decode(t, `{"$string":{"min":3,"max":2}}`), "$string", "min 3 is greater than max 2"},
		{"string bad len", decode(t, `{"$string":{"len":"x"}}`), "$string.len", `got "x"`},
		{"string empty alphabet", decode(t, `{"$string":{"len":2,"alphabet":""}}`), "$string.alphabet", `expected a non-empty string of characters, got ""`},
		{"string bad utf-8 alphabet", map[string]any{"$string": map[string]any{"len": 2, "alphabet": "\xff"}}, "$string.alphabet", "not valid UTF-8"},
		{"string unknown key", decode(t, `{"$string":{"size":2}}`), "$string", "unknown key size in $string; expected len, min, max, alphabet"},
		{"choice empty", decode(t, `{"$choice":[]}`), "$choice", "expected a non-empty list of values"},
		{"choice not a list", decode(t, `{"$choice":"a"}`), "$choice", `got "a"`},
		{"choice bad branch", decode(t, `{"$choice":[1,{"$uuid":"v1"}]}`), "$choice[1].$uuid", `expected v4 ({$uuid: v4}), got "v1"`},
		{"weighted negative", decode(t, `{"$weighted":[{"weight":-1,"value":1}]}`), "$weighted[0].weight", "expected a non-negative number, got -1"},
		{"weighted zero total", decode(t, `{"$weighted":[{"weight":0,"value":1}]}`), "$weighted", "the weights must add up to a positive finite number, got 0"},
		{"weighted missing weight", decode(t, `{"$weighted":[{"value":1}]}`), "$weighted[0]", "expected {weight: N, value: V}"},
		{"weighted missing value", decode(t, `{"$weighted":[{"weight":1}]}`), "$weighted[0]", "expected {weight: N, value: V}"},
		{"weighted unknown key", decode(t, `{"$weighted":[{"weight":1,"value":1,"x":2}]}`), "$weighted[0]", "unknown key x in $weighted entry; expected weight, value"},
		{"weighted not a list", decode(t, `{"$weighted":{"a":1}}`), "$weighted", "expected a non-empty list of {weight, value}"},
		{"weighted bad value", decode(t, `{"$weighted":[{"weight":1,"value":{"$int":[]}}]}`), "$weighted[0].value.$int", "expected [min, max]"},
		{"seq not an integer", decode(t, `{"$seq":"a"}`), "$seq", `expected a start integer or {start: S, step: K}, got "a"`},
		{"seq bad start", decode(t, `{"$seq":{"start":"x"}}`), "$seq.start", `expected an integer, got "x"`},
		{"seq unknown key", decode(t, `{"$seq":{"begin":1}}`), "$seq", "unknown key begin in $seq; expected start, step"},
		{"uuid", decode(t, `{"$uuid":4}`), "$uuid", "expected v4 ({$uuid: v4}), got 4"},
		{"hex negative", decode(t, `{"$hex":{"bytes":-1}}`), "$hex.bytes", "expected {$hex: {bytes: N}} or {$hex: N} with N from 0 to 1048576, got -1"},
		{"hex no bytes", decode(t, `{"$hex":{}}`), "$hex", "expected {$hex: {bytes: N}}"},
		{"hex unknown key", decode(t, `{"$hex":{"size":1}}`), "$hex", "unknown key size in $hex; expected bytes"},
		{"hexint empty hex", decode(t, `{"$hexint":["0x",1]}`), "$hexint[0]", `expected a non-negative integer or a "0x" hex string up to 2^64-1, got "0x"`},
		{"hexint negative", decode(t, `{"$hexint":[-1,2]}`), "$hexint[0]", "got -1"},
		{"hexint order", decode(t, `{"$hexint":["0x20","0x10"]}`), "$hexint", "min 0x20 is greater than max 0x10"},
		{"hexint too big", decode(t, `{"$hexint":[0,"0x1ffffffffffffffff"]}`), "$hexint[1]", "up to 2^64-1"},
		{"hexint not a pair", decode(t, `{"$hexint":5}`), "$hexint", "expected [min, max]"},
		{"now", decode(t, `{"$now":"iso"}`), "$now", `expected unix, unixms, unixns or rfc3339, got "iso"`},
		{"feed unknown feeder", decode(t, `{"$feed":"nope.x"}`), "$feed", `no feeder named "nope"; feeders: addrs`},
		{"feed unknown column", decode(t, `{"$feed":"addrs.nope"}`), "$feed", `feeder "addrs" has no column "nope"; columns: address, balance`},
		{"feed not a string", decode(t, `{"$feed":1}`), "$feed", `expected "feeder" or "feeder.column", got 1`},
		{"NaN literal", []any{math.NaN()}, "[0]", "NaN is not a JSON number"},
		{"bad json.Number", []any{"ok", jsonNumber("01")}, "[1]", `"01" is not a JSON number`},
		{"unsupported type", map[string]any{"x": struct{}{}}, "x", "unsupported value of type struct {}"},
		{"non-string key", map[any]any{1: "x"}, "", "mapping key 1 is a int; JSON object keys are strings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.v, feeders)
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *CompileError", err)
			}
			if got := formatPath(ce.Path); got != tc.path {
				t.Errorf("path %q, want %q", got, tc.path)
			}
			if !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("message %q does not contain %q", ce.Msg, tc.msg)
			}
			if want := tc.path + ": "; tc.path != "" && !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Error() = %q, want it to start with %q", err.Error(), want)
			}
		})
	}
}

// TestKnownGeneratorsIsComplete keeps the error message's list and the
// dispatch in step.
func TestKnownGeneratorsIsComplete(t *testing.T) {
	for name := range strings.SplitSeq(knownGenerators, ", ") {
		if generatorFor(name) == nil {
			t.Errorf("%s is listed but has no compiler", name)
		}
	}
	for _, name := range []string{"$int", "$float", "$string", "$choice", "$weighted", "$seq", "$uuid", "$hex", "$hexint", "$now", "$feed"} {
		if !strings.Contains(knownGenerators+",", name+",") {
			t.Errorf("%s is not listed", name)
		}
	}
}

func TestAllErrorsAreReported(t *testing.T) {
	_, err := Compile(decode(t, `[{"$int":[2,1]},{"ok":1},{"$foo":1}]`), nil)
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("err = %#v, want a joined error", err)
	}
	var paths []string
	for _, e := range joined.Unwrap() {
		paths = append(paths, formatPath(e.(*CompileError).Path))
	}
	if want := "[0].$int [2].$foo"; strings.Join(paths, " ") != want {
		t.Fatalf("paths %v, want %s", paths, want)
	}
	var first *CompileError
	if !errors.As(err, &first) || formatPath(first.Path) != "[0].$int" {
		t.Fatalf("errors.As found %v", first)
	}
}

func TestErrorCountIsBounded(t *testing.T) {
	bad := make([]any, 500)
	for i := range bad {
		bad[i] = map[string]any{"$nope": i}
	}
	_, err := Compile(bad, nil)
	errs := err.(interface{ Unwrap() []error }).Unwrap()
	if len(errs) != maxErrors+1 || !strings.Contains(errs[maxErrors].Error(), "more than 100 errors") {
		t.Fatalf("%d errors, last %v", len(errs), errs[len(errs)-1])
	}
}

func TestSizeLimits(t *testing.T) {
	var deep any = 1
	for range maxDepth + 5 {
		deep = []any{deep}
	}
	_, err := Compile(deep, nil)
	if err == nil || !strings.Contains(err.Error(), "nested more than 1000 levels deep") {
		t.Fatalf("deep: %v", err)
	}
	// A YAML alias bomb decodes into a shared tree that is small in memory
	// but huge when walked.
	var bomb any = []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for range 7 {
		bomb = []any{bomb, bomb, bomb, bomb, bomb, bomb, bomb, bomb, bomb, bomb}
	}
	_, err = Compile(bomb, nil)
	if err == nil || !strings.Contains(err.Error(), "template has more than 1000000 values") {
		t.Fatalf("bomb: %v", err)
	}
}

func TestFeederWithoutRows(t *testing.T) {
	_, err := Compile(decode(t, `{"$feed":"e"}`), map[string]*Feeder{"e": {}, "nil": nil})
	if err == nil || !strings.Contains(err.Error(), `feeder "e" has no rows`) {
		t.Fatalf("%v", err)
	}
	_, err = Compile(decode(t, `{"$feed":"x"}`), nil)
	if err == nil || !strings.Contains(err.Error(), `no feeder named "x": the scenario defines no feeders`) {
		t.Fatalf("%v", err)
	}
}

func jsonNumber(s string) any { return json.Number(s) }
