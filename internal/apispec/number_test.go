package apispec

import "testing"

// TestZeroFraction: a number written with a fraction of zeros is an
// integer to JSON Schema but not to a typed decoder, so a call with one
// is not judged. go-ethereum's test_add(a, b int), described as two
// integers, refused [9007199254740993.0, 0] with -32602 ("cannot unmarshal
// number 9007199254740993.0 into Go value of type int"), which the run
// reported as valid_params_rejected.
func TestZeroFraction(t *testing.T) {
	api, err := FromOpenRPC([]byte(`{"methods": [{"name": "test_add", "paramStructure": "by-position",
	  "params": [{"name": "a", "required": true, "schema": {"type": "integer"}},
	             {"name": "b", "required": true, "schema": {"type": "integer"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	add := find(t, api, "test_add")
	for _, tc := range []struct {
		params string
		want   Verdict
	}{
		{`[9007199254740993, 0]`, Valid},
		{`[9007199254740993.0, 0]`, NotJudged},
		{`[2.00, 0]`, NotJudged},
		{`[2.50, 0]`, Invalid},
		{`[0.0, 1]`, NotJudged},
	} {
		if got, why := add.CheckParams([]byte(tc.params)); got != tc.want {
			t.Errorf("%s: verdict %d (%s), want %d", tc.params, got, why, tc.want)
		}
	}
	for v, want := range map[string]bool{`1.0`: false, `1.05`: true, `10`: true, `-3.000`: false, `0.5`: true} {
		if got := Unambiguous([]byte(v)); got != want {
			t.Errorf("Unambiguous(%s) = %v, want %v", v, got, want)
		}
	}
}
