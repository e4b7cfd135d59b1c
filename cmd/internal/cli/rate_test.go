package cli

import (
	"math"
	"strings"
	"testing"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"500", 500, ""},
		{"0.5", 0.5, ""},
		{"0", 0, ""},
		{"-1", -1, ""}, // the range is the flag's rule
		{"50/1s", 50, ""},
		{"50/s", 50, ""},
		{"3000/m", 50, ""},
		{"3000/1m", 50, ""},
		{"10/100ms", 100, ""},
		{"7200/2h", 1, ""},
		{" 50 / 1s ", 50, ""},
		{"fast", 0, `"fast" is not a rate`},
		{"50/", 0, "positive duration"},
		{"50/0s", 0, "positive duration"},
		{"50/-1s", 0, "positive duration"},
		{"50/fortnight", 0, "positive duration"},
		{"NaN", 0, "is not a rate"},
		{"Inf/s", 0, "is not a rate"},
		{"/s", 0, "is not a rate"},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRate(%q) = %g, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %g, %v; want %g", tt.in, got, err, tt.want)
		}
	}
}

func TestParseFraction(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  bool
	}{
		{"0.1%", 0.001, false}, {"5%", 0.05, false}, {" 5 % ", 0.05, false}, {"0.001", 0.001, false}, {"0", 0, false},
		{"", 0, true}, {"%", 0, true}, {"five", 0, true}, {"NaN", 0, true}, {"1e400", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseFraction(tt.in)
		if (err != nil) != tt.err || !tt.err && math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("ParseFraction(%q) = %g, %v; want %g, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
