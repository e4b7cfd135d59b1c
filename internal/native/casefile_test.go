package native

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
)

// TestCaseFileRoundTrip writes case files and reads them back: any bytes
// come back exactly, UTF-8 as readable strings (HTML characters
// unescaped), anything else as base64.
func TestCaseFileRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		c        mutate.Case
		wantText []string // in the file
	}{
		{"json", mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"a<b>&c"}`)}}, []string{`"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a<b>&c\"}"`}},
		{"invalid utf-8", mutate.Case{Frames: [][]byte{{'"', 0xff, 0xfe, '"'}, []byte("[]")}}, []string{`"base64": "Iv/+Ig=="`, `"[]"`}},
		{"empty message", mutate.Case{Frames: [][]byte{{}}}, []string{`""`}},
		{"wire", mutate.Case{Frames: [][]byte{[]byte("{}")}, Wire: []byte("{\n}")}, []string{`"wire": "{\n}"`}},
		{"empty wire", mutate.Case{Frames: [][]byte{[]byte("{}")}, Wire: []byte{}}, []string{`"wire": ""`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := NewCaseFile("FuzzRPC", "crash", "testdata/fuzz/FuzzRPC/x", tt.c).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(string(data), w) {
					t.Errorf("file does not hold %s:\n%s", w, data)
				}
			}
			path := filepath.Join(t.TempDir(), "case.json")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := ReadCaseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := f.Case()
			if f.FuzzTest != "FuzzRPC" || f.Rule != "crash" || !slices.EqualFunc(got.Frames, tt.c.Frames, bytes.Equal) ||
				(got.Wire == nil) != (tt.c.Wire == nil) || !bytes.Equal(got.Wire, tt.c.Wire) {
				t.Fatalf("read back %+v (case %q), want %q", f, got, tt.c)
			}
		})
	}
}

func TestReadCaseFileRejects(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"no message", `{"fuzz_test":"FuzzRPC","rule":"crash","messages":[]}`, "no message"},
		{"unknown field", `{"fuzz_test":"FuzzRPC","messages":["{}"],"extra":1}`, "unknown field"},
		{"bad message", `{"fuzz_test":"FuzzRPC","messages":[1]}`, "JSON string or"},
		{"bad base64", `{"fuzz_test":"FuzzRPC","messages":[{"base64":"!"}]}`, "base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "case.json")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadCaseFile(path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadCaseFile: %v; want an error with %q", err, tt.want)
			}
		})
	}
}

// TestLocate reads the package and the fuzz test from a native failure's
// path (or a literal case's file), and refuses any other path.
func TestLocate(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	failure := filepath.Join(pkg, "testdata", "fuzz", "FuzzRPC", "5d1e")
	lit := filepath.Join(pkg, "testdata", "rpcfuzz", "FuzzRPC-3f2a.json")
	c := mutate.Case{Frames: [][]byte{[]byte(`{"id":1}`)}}
	caseText, err := NewCaseFile("FuzzRPC", "crash", "testdata/fuzz/FuzzRPC/5d1e", c).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		failure: fuzzcase.MarshalGoCorpus([]byte("\x01\x02")),
		lit:     caseText,
		filepath.Join(pkg, "testdata", "FuzzRPC", "5d1e"):         fuzzcase.MarshalGoCorpus([]byte("\x01")),
		filepath.Join(pkg, "fuzz", "FuzzRPC", "5d1e"):             fuzzcase.MarshalGoCorpus([]byte("\x01")),
		filepath.Join(pkg, "testdata", "fuzz", "TestRPC", "5d1e"): fuzzcase.MarshalGoCorpus([]byte("\x01")),
	}
	for f, data := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path, test string // test "": refused
		input      []byte
		from       string
	}{
		{failure, "FuzzRPC", []byte("\x01\x02"), failure},
		{lit, "FuzzRPC", fuzzcase.Encode(c), "testdata/fuzz/FuzzRPC/5d1e"},
		{filepath.Join(pkg, "testdata", "FuzzRPC", "5d1e"), "", nil, ""},
		{filepath.Join(pkg, "fuzz", "FuzzRPC", "5d1e"), "", nil, ""},
		{filepath.Join(pkg, "testdata", "fuzz", "TestRPC", "5d1e"), "", nil, ""},
	}
	for _, tt := range tests {
		m, input, from, err := locate(tt.path)
		switch {
		case tt.test == "" && err == nil:
			t.Errorf("locate(%s) = %+v; want an error", tt.path, m)
		case tt.test != "" && (err != nil || m.Dir != pkg || m.FuzzTest != tt.test || !bytes.Equal(input, tt.input) || from != tt.from):
			t.Errorf("locate(%s) = %+v, %q, %s, %v; want %s in %s, %q from %s", tt.path, m, input, from, err, tt.test, pkg, tt.input, tt.from)
		}
	}
}

// TestDrivenPattern: the fuzz test and its f.Add seeds, not its corpus
// files.
func TestDrivenPattern(t *testing.T) {
	if got, want := DrivenPattern("FuzzRPC"), "^FuzzRPC$/^seed#[0-9]+$"; got != want {
		t.Fatalf("DrivenPattern = %q, want %q", got, want)
	}
}
