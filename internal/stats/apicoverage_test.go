package stats

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// coverageFixture is the coverage of a run of an API of three methods, one
// never reached (only -32601 came back), with a note.
func coverageFixture() *APICoverage {
	return &APICoverage{
		Methods: []MethodCoverage{
			{Name: "countdown", Kind: "method", Source: "openrpc", CallsValid: 40, CallsInvalid: 30, CallsUnjudged: 2, Results: 38,
				NoReply: 1, ErrorsByCode: map[string]uint64{"-32602": 30, "-32603": 3}, Findings: []string{"crash-0a1b2c3d4e"}},
			{Name: "now", Kind: "method", Source: "openrpc", CallsValid: 12, Results: 12, ErrorsByCode: map[string]uint64{}, Findings: []string{}},
			{Name: "tool search", Kind: "tool", Source: "mcp", CallsUnjudged: 5, ErrorsByCode: map[string]uint64{"-32601": 5}, Findings: []string{}},
		},
		NeverReached: []string{"tool search"},
		Notes:        []string{"prompt greet: no arguments schema"},
	}
}

// TestWriteAPICoverage: the text lines rpcfuzz's summary prints (and the
// text report of a result with coverage), byte for byte.
func TestWriteAPICoverage(t *testing.T) {
	hostile := coverageFixture()
	hostile.Methods = hostile.Methods[:1]
	hostile.Methods[0].Name = "a\nb\tc " + strings.Repeat("x", 40)
	hostile.NeverReached = nil
	cases := []struct {
		name string
		c    *APICoverage
		want string
	}{
		{"none", nil, ""},
		{"three methods", coverageFixture(), "" +
			"API: 3 methods, 1 never reached\n" +
			"  countdown                            40 valid     30 invalid      2 unjudged calls;     38 results, errors -32602×30 -32603×3, 1 unanswered; 1 findings\n" +
			"  now                                  12 valid      0 invalid      0 unjudged calls;     12 results, no errors, 0 unanswered; 0 findings\n" +
			"  tool search                           0 valid      0 invalid      5 unjudged calls;      0 results, errors -32601×5, 0 unanswered; 0 findings\n" +
			"  never reached: tool search\n"},
		{"a name on one line, cut", hostile, "" +
			"API: 1 methods, 0 never reached\n" +
			"  a b c xxxxxxxxxxxxxxxxxxxxxxxxxx…     40 valid     30 invalid      2 unjudged calls;     38 results, errors -32602×30 -32603×3, 1 unanswered; 1 findings\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			WriteAPICoverage(&b, tc.c)
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

// TestResultAPI: a result carries the coverage through its file and its
// text report, and a result without it has no "api" at all.
func TestResultAPI(t *testing.T) {
	for _, tc := range []struct {
		name string
		api  *APICoverage
	}{{"with coverage", coverageFixture()}, {"without", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			r := baseResult(t)
			r.API = tc.api
			path := filepath.Join(t.TempDir(), "latency.json")
			if err := WriteJSONFile(path, r); err != nil {
				t.Fatal(err)
			}
			got, err := ReadJSONFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.API, tc.api) {
				t.Errorf("api after the round trip: %+v, want %+v", got.API, tc.api)
			}
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if has := bytes.Contains(raw, []byte(`"api"`)); has != (tc.api != nil) {
				t.Errorf(`the file has "api": %v`, has)
			}
			var text bytes.Buffer
			if err := WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(text.String(), "\nAPI: 3 methods, 1 never reached\n  countdown "); has != (tc.api != nil) {
				t.Errorf("the text report shows the coverage: %v\n%s", has, text.String())
			}
		})
	}
}

// TestMergeAPICoverage: the coverage of merged parts adds up per method;
// a method one part reached is reached; findings and notes are united; a
// note says when the parts' APIs differ or some parts had no coverage.
func TestMergeAPICoverage(t *testing.T) {
	other := func() *APICoverage {
		c := coverageFixture()
		c.Methods = []MethodCoverage{
			{Name: "tool search", Kind: "tool", Source: "mcp", CallsValid: 3, Results: 1, ErrorsByCode: map[string]uint64{"-32601": 1, "-32000": 1},
				Findings: []string{"hang-ffffffffff"}},
			{Name: "countdown", Kind: "method", Source: "openrpc", CallsValid: 1, ErrorsByCode: map[string]uint64{"-32602": 2},
				Findings: []string{"crash-0a1b2c3d4e", "wrong_error_code-1111111111"}},
			{Name: "now", Kind: "method", Source: "openrpc", ErrorsByCode: map[string]uint64{}, Findings: []string{}},
		}
		c.NeverReached = []string{"now"}
		return c
	}
	summed := []MethodCoverage{
		{Name: "countdown", Kind: "method", Source: "openrpc", CallsValid: 41, CallsInvalid: 30, CallsUnjudged: 2, Results: 38, NoReply: 1,
			ErrorsByCode: map[string]uint64{"-32602": 32, "-32603": 3}, Findings: []string{"crash-0a1b2c3d4e", "wrong_error_code-1111111111"}},
		{Name: "now", Kind: "method", Source: "openrpc", CallsValid: 12, Results: 12, ErrorsByCode: map[string]uint64{}, Findings: []string{}},
		{Name: "tool search", Kind: "tool", Source: "mcp", CallsValid: 3, CallsUnjudged: 5, Results: 1,
			ErrorsByCode: map[string]uint64{"-32601": 6, "-32000": 1}, Findings: []string{"hang-ffffffffff"}},
	}
	differentAPI := func() *APICoverage {
		c := other()
		c.Methods = c.Methods[:2]
		c.Methods = append(c.Methods, MethodCoverage{Name: "later", Kind: "method", Source: "openrpc", CallsValid: 2,
			ErrorsByCode: map[string]uint64{"-32601": 2}, Findings: []string{}})
		c.Notes = []string{"another note"}
		return c
	}
	cases := []struct {
		name string
		a, b *APICoverage
		want *APICoverage
	}{
		{"none", nil, nil, nil},
		{"one part alone", coverageFixture(), nil, &APICoverage{Methods: coverageFixture().Methods, NeverReached: []string{"tool search"},
			Notes: []string{"prompt greet: no arguments schema", "1 of the 2 merged parts carried API coverage: the counts are theirs only"}}},
		{"same API", coverageFixture(), other(), &APICoverage{Methods: summed, NeverReached: []string{}, Notes: []string{"prompt greet: no arguments schema"}}},
		{"different APIs", coverageFixture(), differentAPI(), &APICoverage{
			Methods: []MethodCoverage{summed[0], coverageFixture().Methods[1], summed[2],
				{Name: "later", Kind: "method", Source: "openrpc", CallsValid: 2, ErrorsByCode: map[string]uint64{"-32601": 2}, Findings: []string{}}},
			NeverReached: []string{"later"},
			Notes: []string{"prompt greet: no arguments schema", "another note",
				"the merged parts knew different APIs: a method counts the calls of the parts whose API had it"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := baseResult(t), baseResult(t)
			a.API, b.API = tc.a, tc.b
			got, err := Merge([]*Result{a, b}, []string{"a/latency.json", "b/latency.json"})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.API, tc.want) {
				gotJSON, _ := json.MarshalIndent(got.API, "", " ")
				wantJSON, _ := json.MarshalIndent(tc.want, "", " ")
				t.Errorf("merged coverage\n%s\nwant\n%s", gotJSON, wantJSON)
			}
			if tc.a != nil && !reflect.DeepEqual(a.API, coverageFixture()) {
				t.Error("Merge changed a part's coverage")
			}
		})
	}
}
