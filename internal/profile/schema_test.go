package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// The MCP schemas are checked with a small JSON Schema validator that covers
// the keywords the schema subsets in testdata use (type, const, enum,
// properties, required, additionalProperties, items, $ref, allOf, anyOf,
// minimum, maximum; format and annotations are ignored). The subsets are
// the $defs reachable from the definitions tested, copied unchanged from
// /work/shared/specs/mcp (see their $comment).

const (
	schemaModern = "schema-2026-07-28-subset.json"
	schemaLegacy = "schema-2025-11-25-subset.json"
)

var schemaCache sync.Map // file name -> map[string]any ($defs)

func schemaDefs(t testing.TB, file string) map[string]any {
	if d, ok := schemaCache.Load(file); ok {
		return d.(map[string]any)
	}
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	defs := s["$defs"].(map[string]any)
	schemaCache.Store(file, defs)
	return defs
}

// validate checks msg against $defs/def of the schema file.
func validate(t testing.TB, file, def string, msg []byte) {
	t.Helper()
	defs := schemaDefs(t, file)
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s is not JSON: %v", msg, err)
	}
	schema, ok := defs[def]
	if !ok {
		t.Fatalf("%s has no definition %s", file, def)
	}
	if errs := (validator{defs}).check(schema, v, def); len(errs) > 0 {
		t.Errorf("%s does not match %s in %s:\n  %s", msg, def, file, strings.Join(errs, "\n  "))
	}
}

type validator struct{ defs map[string]any }

func (vd validator) check(schema any, v any, path string) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		if b, ok := schema.(bool); ok && !b {
			return []string{path + ": not allowed"}
		}
		return nil
	}
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, a...)) }
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		errs = append(errs, vd.check(vd.defs[name], v, path+"<"+name+">")...)
	}
	if typ, ok := s["type"]; ok && !typeMatches(typ, v) {
		fail("type %v wanted, got %T", typ, v)
		return errs
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, v) {
		fail("const %v wanted, got %v", c, v)
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || jsonEqual(e, v)
		}
		if !found {
			fail("one of %v wanted, got %v", enum, v)
		}
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if minimum, ok := s["minimum"].(float64); ok && f < minimum {
			fail("%v < minimum %v", f, minimum)
		}
		if maximum, ok := s["maximum"].(float64); ok && f > maximum {
			fail("%v > maximum %v", f, maximum)
		}
	}
	for _, sub := range asList(s["allOf"]) {
		errs = append(errs, vd.check(sub, v, path)...)
	}
	if anyOf := asList(s["anyOf"]); len(anyOf) > 0 {
		matched := false
		for _, sub := range anyOf {
			matched = matched || len(vd.check(sub, v, path)) == 0
		}
		if !matched {
			fail("matches none of anyOf")
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				fail("required member %q missing", r)
			}
		}
		for k, val := range obj {
			if ps, ok := props[k]; ok {
				errs = append(errs, vd.check(ps, val, path+"."+k)...)
			} else if ap, ok := s["additionalProperties"]; ok {
				errs = append(errs, vd.check(ap, val, path+"."+k)...)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"]; ok {
			for i, e := range arr {
				errs = append(errs, vd.check(items, e, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

func asList(v any) []any { l, _ := v.([]any); return l }

func typeMatches(typ any, v any) bool {
	for _, t := range append(asList(typ), typ) {
		name, _ := t.(string)
		switch v := v.(type) {
		case nil:
			if name == "null" {
				return true
			}
		case bool:
			if name == "boolean" {
				return true
			}
		case string:
			if name == "string" {
				return true
			}
		case json.Number:
			if name == "number" {
				return true
			}
			if _, err := v.Int64(); err == nil && name == "integer" {
				return true
			}
		case []any:
			if name == "array" {
				return true
			}
		case map[string]any:
			if name == "object" {
				return true
			}
		}
	}
	return false
}

func jsonEqual(schemaValue, v any) bool {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return err == nil && reflect.DeepEqual(schemaValue, f)
	}
	return reflect.DeepEqual(schemaValue, v)
}

// TestValidator makes sure the validator rejects what it should, so that a
// passing schema test means something.
func TestValidator(t *testing.T) {
	defs := schemaDefs(t, schemaModern)
	bad := []struct{ def, msg string }{
		{"DiscoverRequest", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`},                         // params required
		{"DiscoverRequest", `{"jsonrpc":"2.0","id":1.5,"method":"server/discover","params":{"_meta":{}}}`}, // float id, _meta keys missing
		{"DiscoverRequest", `{"jsonrpc":"2.0","id":null,"method":"server/discover","params":{}}`},
		{"CancelledNotification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}`},
		{"HeaderMismatchError", `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m"}}`},
		{"JSONRPCResultResponse", `{"jsonrpc":"2.0","id":1,"result":{}}`}, // resultType required
	}
	for _, tc := range bad {
		d := json.NewDecoder(strings.NewReader(tc.msg))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if errs := (validator{defs}).check(defs[tc.def], v, tc.def); len(errs) == 0 {
			t.Errorf("validator accepts %s as %s", tc.msg, tc.def)
		}
	}
}
