package main

import (
	"bufio"
	"net/http"
	"net/textproto"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"16MiB", "1", "512KiB", "3KB", "1GB", "100B", " 2 GiB ", "+5", "0", "-1", "1024GiB",
		"1099511627776", "1099511627777", "1TiB", "99999999999999999999", "9223372036854775807KiB", "MiB", "1.5MiB", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			if n != 0 {
				t.Errorf("parseSize(%q) = %d with error %v", s, n, err)
			}
			return
		}
		if n <= 0 || int64(n) > 1<<40 {
			t.Fatalf("parseSize(%q) = %d, outside (0, 1 TiB]", s, n)
		}
		back, err := parseSize(strconv.Itoa(n))
		if err != nil || back != n {
			t.Fatalf("parseSize(%q) = %d, but parseSize(%q) = %d, %v", s, n, strconv.Itoa(n), back, err)
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
		h, err := parseHeaders(in)
		if err != nil {
			if h != nil {
				t.Errorf("parseHeaders(%q) returned a header with error %v", in, err)
			}
			return
		}
		var wire strings.Builder
		for name, values := range h {
			if name == "" || strings.ContainsAny(name, "\r\n") {
				t.Fatalf("parseHeaders(%q): bad name %q", in, name)
			}
			for _, v := range values {
				if strings.ContainsAny(v, "\r\n") {
					t.Fatalf("parseHeaders(%q): header %q value %q has a line break", in, name, v)
				}
				wire.WriteString(name + ": " + v + "\r\n")
			}
		}
		// Round trip: what we would send parses back, unchanged, with the
		// standard library's strict MIME header reader.
		wire.WriteString("\r\n")
		got, err := textproto.NewReader(bufio.NewReader(strings.NewReader(wire.String()))).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("parseHeaders(%q) accepted headers that do not parse back: %v\n%q", in, err, wire.String())
		}
		if !reflect.DeepEqual(http.Header(got), h) {
			t.Fatalf("parseHeaders(%q) = %q, parsed back as %q", in, h, got)
		}
	})
}
