package fuzzcase

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// goCorpusVersion is the first line of every corpus file `go test -fuzz`
// writes (format version 1).
const goCorpusVersion = "go test fuzz v1"

// MarshalGoCorpus gives the corpus file `go test -fuzz` writes for data when
// the fuzz function takes one []byte: the version line, then data as a
// []byte conversion of a Go string literal. Go writes that literal with
// fmt's %q, which is strconv.Quote: printable UTF-8 kept as is, invalid bytes
// as \xNN, other non-printable runes as \uNNNN or \UNNNNNNNN. Writing it the
// same way keeps a file exported by rpcfuzz identical to the one Go would
// write for the same input, so the two never both end up in testdata/fuzz.
func MarshalGoCorpus(data []byte) []byte {
	out := make([]byte, 0, len(goCorpusVersion)+len(data)*2+16)
	out = append(out, goCorpusVersion...)
	out = append(out, "\n[]byte("...)
	out = strconv.AppendQuote(out, string(data))
	return append(out, ")\n"...)
}

// UnmarshalGoCorpus reads a corpus file for a fuzz function that takes one
// []byte and returns the bytes. It accepts what `go test` accepts for such a
// function: the version line (a trailing \r allowed), then, on lines of their
// own with blank lines and surrounding white space ignored, exactly one
// value, []byte("...") or []byte(`...`). The error names the line at fault.
func UnmarshalGoCorpus(file []byte) ([]byte, error) {
	if len(file) == 0 {
		return nil, errors.New("go corpus file: empty")
	}
	lines := bytes.Split(file, []byte("\n"))
	if v := bytes.TrimSuffix(lines[0], []byte("\r")); string(v) != goCorpusVersion {
		return nil, fmt.Errorf("go corpus file: line 1: %q is not the version line %q", clip(v), goCorpusVersion)
	}
	var (
		data  []byte
		found bool
	)
	for i, line := range lines[1:] {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if found {
			return nil, fmt.Errorf("go corpus file: line %d: a second value; a []byte fuzz function takes exactly one", i+2)
		}
		b, err := parseBytesValue(line)
		if err != nil {
			return nil, fmt.Errorf("go corpus file: line %d: %v", i+2, err)
		}
		data, found = b, true
	}
	if !found {
		return nil, errors.New("go corpus file: no value after the version line")
	}
	return data, nil
}

// parseBytesValue reads one []byte(literal) line with Go's own parser, as
// `go test` does, so both agree on every escape and on every malformed line.
func parseBytesValue(line []byte) ([]byte, error) {
	expr, err := parser.ParseExprFrom(token.NewFileSet(), "", line, 0)
	if err != nil {
		return nil, fmt.Errorf("not a Go expression: %v", err)
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("%q is not a conversion []byte(\"...\")", clip(line))
	}
	arr, ok := call.Fun.(*ast.ArrayType)
	if !ok || arr.Len != nil {
		return nil, fmt.Errorf("%q is not a []byte value (a []byte fuzz function takes nothing else)", clip(line))
	}
	if elt, ok := arr.Elt.(*ast.Ident); !ok || elt.Name != "byte" {
		return nil, fmt.Errorf("%q is not a []byte value (a []byte fuzz function takes nothing else)", clip(line))
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil, fmt.Errorf("%q: []byte needs a string literal", clip(line))
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return nil, fmt.Errorf("bad string literal: %v", err)
	}
	return []byte(s), nil
}

// clip shortens what an error quotes: corpus lines can be megabytes long.
func clip(b []byte) []byte {
	const max = 64
	if len(b) > max {
		return append(b[:max:max], "..."...)
	}
	return b
}
