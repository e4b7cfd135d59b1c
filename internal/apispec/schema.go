package apispec

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL names a schema inside its compiler; no other URL loads.
const schemaURL = "mem:///schema.json"

// CompileSchema compiles a JSON Schema (draft 2020-12 unless its $schema
// says otherwise). References may point only inside the schema: no file or
// network is read. The error is the compiler's (a
// *jsonschema.SchemaValidationError for a schema that breaks its
// metaschema).
func CompileSchema(src []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// maxPlainDepth is the deepest nesting Unambiguous accepts.
const maxPlainDepth = 64

// Unambiguous reports whether the JSON value v reads the same to every
// parser: valid JSON with no member name twice in an object, numbers
// without an exponent, not -0, without a fraction of zeros (2.0) and
// within float64's range, strings of valid UTF-8 without lone surrogates,
// nesting at most 64 deep. What is not unambiguous is not judged (see the
// package doc).
func Unambiguous(v []byte) bool { return json.Valid(v) && unambiguous(v, 0) }

// unambiguous is Unambiguous on valid JSON, its containers depth deep.
func unambiguous(v []byte, depth int) bool {
	v = wire.TrimSpace(v)
	if len(v) == 0 || (v[0] == '{' || v[0] == '[') && depth >= maxPlainDepth {
		return false
	}
	switch v[0] {
	case '{':
		it, _ := wire.ObjectMembers(v)
		var names []string
		for n, val, ok := it.Next(); ok; n, val, ok = it.Next() {
			if !plainString(n) {
				return false
			}
			name, _ := wire.Unquote(nil, n)
			for _, seen := range names {
				if seen == string(name) {
					return false
				}
			}
			names = append(names, string(name))
			if !unambiguous(val, depth+1) {
				return false
			}
		}
		return true
	case '[':
		it, _ := wire.ArrayElements(v)
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			if !unambiguous(e, depth+1) {
				return false
			}
		}
		return true
	case '"':
		return plainString(v)
	case 't', 'f', 'n':
		return true
	}
	if bytes.ContainsAny(v, "eE") {
		return false
	}
	if v[0] == '-' && len(bytes.Trim(v[1:], "0.")) == 0 {
		return false // -0, -0.0
	}
	if i := bytes.IndexByte(v, '.'); i >= 0 && len(bytes.TrimRight(v[i+1:], "0")) == 0 {
		// 2.0 is an integer to JSON Schema (draft 6 on), not to a typed
		// decoder: Go's encoding/json refuses it for an int (go-ethereum
		// answers -32602 for test_add [9007199254740993.0, 0]).
		return false
	}
	// A number beyond float64's range is refused by some parsers and
	// read as infinity by others.
	_, err := strconv.ParseFloat(string(v), 64)
	return err == nil
}

// plainString reports whether the raw JSON string s (quotes included) is a
// whole, valid string of UTF-8 without lone surrogates.
func plainString(s []byte) bool {
	end, ok := wire.ValidStringEnd(s, 0)
	if !ok || end != len(s) || !utf8.Valid(s) || wire.HasLoneSurrogate(s) {
		return false
	}
	_, ok = wire.Unquote(nil, s)
	return ok
}
