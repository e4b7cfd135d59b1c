package cli

import (
	"bufio"
	"net/http"
	"net/textproto"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int // 0: an error
	}{
		{"1", 1},
		{"64", 64},
		{"1000000", 1000000},
		{"16MiB", 16 << 20},
		{"512KiB", 512 << 10},
		{"2GiB", 2 << 30},
		{"3KB", 3000},
		{"3MB", 3e6},
		{"1GB", 1e9},
		{"100B", 100},
		{" 16 MiB ", 16 << 20},
		{"+5", 5},
		{"1099511627776", 1 << 40},
		{"1024GiB", 1 << 40},
		{"1099GB", 1099e9},
		{"1099511627KB", 1099511627000},
		{"", 0},
		{"0", 0},
		{"-1", 0},
		{"-1MiB", 0},
		{"0KiB", 0},
		{"MiB", 0},
		{"1.5MiB", 0},
		{"12XB", 0},
		{"16mib", 0},
		{"16 M", 0},
		{"0x10", 0},
		{"1_000", 0},
		{"1TiB", 0},
		{"1099511627777", 0},
		{"1025GiB", 0},
		{"1100GB", 0},
		{"1099511628KB", 0},
		{"99999999999999999999", 0},
		{"9223372036854775807", 0},
		{"9223372036854775807KiB", 0},
		{"1KiBKiB", 0},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in, MaxReadSize)
		switch {
		case tt.want == 0 && err == nil:
			t.Errorf("ParseSize(%q) = %d, want an error", tt.in, got)
		case tt.want == 0:
			if !strings.Contains(err.Error(), tt.in) {
				t.Errorf("ParseSize(%q) error %q does not quote the input", tt.in, err)
			}
		case err != nil || got != tt.want:
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	tests := []struct {
		in   []string
		want http.Header // nil: an error
	}{
		{[]string{"X-A: b"}, http.Header{"X-A": {"b"}}},
		{[]string{"x-a:b"}, http.Header{"X-A": {"b"}}},
		{[]string{"  X-A  :   b c  "}, http.Header{"X-A": {"b c"}}},
		{[]string{"X-A:"}, http.Header{"X-A": {""}}},
		{[]string{"Authorization: Bearer a:b:c"}, http.Header{"Authorization": {"Bearer a:b:c"}}},
		{[]string{"X-A: 1", "x-a: 2", "X-B: 3"}, http.Header{"X-A": {"1", "2"}, "X-B": {"3"}}},
		{[]string{"X-A: tab\there"}, http.Header{"X-A": {"tab\there"}}},
		{[]string{"X-A: caf\u00e9"}, http.Header{"X-A": {"caf\u00e9"}}},
		{[]string{"!#$%&'*+-.^_`|~09az: v"}, http.Header{"!#$%&'*+-.^_`|~09az": {"v"}}},
		{[]string{}, http.Header{}},
		{[]string{"NoColon"}, nil},
		{[]string{""}, nil},
		{[]string{":v"}, nil},
		{[]string{"   : v"}, nil},
		{[]string{"X A: v"}, nil},
		{[]string{"X\tA: v"}, nil},
		{[]string{"X\rA: v"}, nil},
		{[]string{"X\nA: v"}, nil},
		{[]string{"X(A): v"}, nil},
		{[]string{"X\"A: v"}, nil},
		{[]string{"X/A: v"}, nil},
		{[]string{"X\x00A: v"}, nil},
		{[]string{"caf\u00e9: v"}, nil},
		{[]string{"X-A: a\r\nX-B: b"}, nil},
		{[]string{"X-A: a\rb"}, nil},
		{[]string{"X-A: a\nb"}, nil},
		{[]string{"X-A: a\x00b"}, nil},
		{[]string{"X-A: a\x1bb"}, nil},
		{[]string{"X-A: a\x7fb"}, nil},
		{[]string{"X-A: ok", "Bad"}, nil},
	}
	for _, tt := range tests {
		got, err := ParseHeaders(tt.in)
		if tt.want == nil {
			if err == nil {
				t.Errorf("ParseHeaders(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseHeaders(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestParseSizeLimit: rpcfuzz's sizes stop at 16 GiB.
func TestParseSizeLimit(t *testing.T) {
	for in, want := range map[string]int{"1MiB": 1 << 20, "64KiB": 64 << 10, "100000": 100000, "2MB": 2e6, " 7 B": 7} {
		if got, err := ParseSize(in, MaxFuzzSize); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0", "-1KiB", "1TiB", "99GiB", "x"} {
		if _, err := ParseSize(in, MaxFuzzSize); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

// FuzzParseSize: an accepted size is positive, within the limit, and
// reads back the same written as a plain number.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"2GB", "1e3", "16GiB", "17179869185", "16MiB", "1", "512KiB", "3KB", "1GB", "100B", " 2 GiB ", "+5", "0", "-1", "1024GiB",
		"1099511627776", "1099511627777", "1TiB", "99999999999999999999", "9223372036854775807KiB", "MiB", "1.5MiB", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, limit := range []int{MaxReadSize, MaxFuzzSize} {
			n, err := ParseSize(s, limit)
			if err != nil {
				if n != 0 {
					t.Errorf("ParseSize(%q, %d) = %d with error %v", s, limit, n, err)
				}
				continue
			}
			if n <= 0 || n > limit {
				t.Fatalf("ParseSize(%q, %d) = %d, outside (0, limit]", s, limit, n)
			}
			back, err := ParseSize(strconv.Itoa(n), limit)
			if err != nil || back != n {
				t.Fatalf("ParseSize(%q) = %d, but ParseSize(%q) = %d, %v", s, n, strconv.Itoa(n), back, err)
			}
		}
	})
}

func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"X-A: b", "x-a:b", "NoColon", ":v", "X-A: a\r\nX-B: b", "X A: v", "X-A: tab\there",
		"Authorization: Bearer a:b", "X-A: caf\u00e9", "X(A): v", "X-A: a\x00b", "\r\nX-A: v", "X-A: \u0085v\u00a0", "X-A:"} {
		f.Add(s, "X-Second: 2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		in := []string{a, b}
		h, err := ParseHeaders(in)
		if err != nil {
			if h != nil {
				t.Errorf("ParseHeaders(%q) returned a header with error %v", in, err)
			}
			return
		}
		var wire strings.Builder
		for name, values := range h {
			if name == "" || strings.ContainsAny(name, "\r\n") {
				t.Fatalf("ParseHeaders(%q): bad name %q", in, name)
			}
			for _, v := range values {
				if strings.ContainsAny(v, "\r\n") {
					t.Fatalf("ParseHeaders(%q): header %q value %q has a line break", in, name, v)
				}
				wire.WriteString(name + ": " + v + "\r\n")
			}
		}
		// Round trip: what we would send parses back, unchanged, with the
		// standard library's strict MIME header reader.
		wire.WriteString("\r\n")
		got, err := textproto.NewReader(bufio.NewReader(strings.NewReader(wire.String()))).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("ParseHeaders(%q) accepted headers that do not parse back: %v\n%q", in, err, wire.String())
		}
		if !reflect.DeepEqual(http.Header(got), h) {
			t.Fatalf("ParseHeaders(%q) = %q, parsed back as %q", in, h, got)
		}
	})
}
