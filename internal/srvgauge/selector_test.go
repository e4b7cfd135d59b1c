package srvgauge

import (
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "go_goroutines", want: "go_goroutines"},
		{in: "  node:memory_used  ", want: "node:memory_used"},
		{in: `http_in_flight{handler="/rpc"}`, want: `http_in_flight{handler="/rpc"}`},
		{in: `x{ b = "2", a != "1", }`, want: `x{a!="1",b="2"}`},
		{in: `x{}`, want: "x"},
		{in: `x{a="quote \" and \\ and \n"}`, want: `x{a="quote \" and \\ and \n"}`},
		{in: "", err: "expected a metric name"},
		{in: "9lives", err: "expected a metric name"},
		{in: "a b", err: `unexpected "b"`},
		{in: `x{a=1}`, err: "double-quoted"},
		{in: `x{a=~"1"}`, err: "double-quoted"},
		{in: `x{a~"1"}`, err: "regular expressions are not supported"},
		{in: `x{a="1",a="2"}`, err: "label a given twice"},
		{in: `x{a="1"`, err: "expected , or }"},
		{in: `x{a="1`, err: "unterminated"},
		{in: `x{a="1" b="2"}`, err: "expected , or }"},
		{in: `x{:a="1"}`, err: "expected a label name"},
		{in: strings.Repeat("a", maxSelectorLen+1), err: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSelector(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseSelector(%q) = %v, %v; want an error with %q", tt.in, s, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("String() = %s, want %s", got, tt.want)
			}
		})
	}
}

// FuzzParseSelector: a selector that parses writes a canonical form that
// parses back to the same canonical form; nothing panics.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"go_goroutines", `x{a="1",b!="2"}`, `x{ a = "\u00e9\n" , }`, `x{a="`, "a:b:c{}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSelector(in)
		if err != nil {
			return
		}
		canon := s.String()
		s2, err := ParseSelector(canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canon, in, err)
		}
		if s2.String() != canon {
			t.Fatalf("canonical form %q of %q reads back as %q", canon, in, s2.String())
		}
	})
}
