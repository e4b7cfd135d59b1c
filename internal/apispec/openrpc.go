package apispec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// OpenRPC's reference prefixes.
const (
	schemaRefPrefix     = "#/components/schemas/"
	descriptorRefPrefix = "#/components/contentDescriptors/"
	defsPrefix          = "#/$defs/"
)

// FromOpenRPC reads the methods of an OpenRPC document
// (https://spec.open-rpc.org): each method's params become one schema: for
// paramStructure "by-name" an object of the named params, the required
// ones required; for "by-position" an array, prefixItems in order, as many
// items required as reach the last required param, no more items than
// params; for "either" (the default) either of the two. The result's schema is the method's result schema. Schemas are
// made self-contained: references to #/components/schemas/NAME become
// #/$defs/NAME with the definitions carried along. Two extensions are
// read: "x-idempotent": true makes the method Idempotent, and
// "x-additionalProperties": false says its by-name params take no member
// but the listed ones (OpenRPC has no word for it). Methods named "rpc.*" belong to
// JSON-RPC itself and are left out, as are references to methods (with a
// note each).
func FromOpenRPC(doc []byte) (*API, error) {
	var root map[string]any
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(&root); err != nil {
		return nil, fmt.Errorf("the OpenRPC document is not a JSON object: %w", err)
	}
	methods, ok := root["methods"].([]any)
	if !ok {
		return nil, errors.New(`the OpenRPC document has no "methods" list`)
	}
	components, _ := root["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	descriptors, _ := components["contentDescriptors"].(map[string]any)
	api := &API{}
	for i, x := range methods {
		m, _ := x.(map[string]any)
		name, _ := m["name"].(string)
		switch {
		case m == nil:
			api.Notes = append(api.Notes, fmt.Sprintf("left out: method %d is not an object", i))
			continue
		case name == "" && m["$ref"] != nil:
			api.Notes = append(api.Notes, fmt.Sprintf("left out: method %d is a reference, which is not followed", i))
			continue
		case name == "":
			api.Notes = append(api.Notes, fmt.Sprintf("left out: method %d has no name", i))
			continue
		case strings.HasPrefix(name, "rpc."):
			api.Notes = append(api.Notes, fmt.Sprintf("left out: %s (rpc.* methods belong to JSON-RPC itself)", name))
			continue
		}
		meth, err := openrpcMethod(m, name, schemas, descriptors)
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", name, err)
		}
		if err := api.Add(meth); err != nil {
			return nil, err
		}
	}
	return api, nil
}

func openrpcMethod(m map[string]any, name string, schemas, descriptors map[string]any) (Method, error) {
	meth := Method{Name: name, Call: name, Source: "openrpc"}
	meth.Idempotent, _ = m["x-idempotent"].(bool)
	structure, _ := m["paramStructure"].(string)
	params, _ := m["params"].([]any)
	props := map[string]any{}
	var required []any
	var prefix []any
	lastRequired := 0
	for i, p := range params {
		pd := descriptor(p, descriptors)
		pname, _ := pd["name"].(string)
		if pname == "" {
			pname = fmt.Sprintf("#%d", i)
		}
		schema := pd["schema"]
		if schema == nil {
			schema = true
		}
		props[pname] = schema
		prefix = append(prefix, schema)
		if req, _ := pd["required"].(bool); req {
			required = append(required, pname)
			lastRequired = i + 1
		}
	}
	byName := map[string]any{"type": "object", "properties": props}
	if closed, ok := m["x-additionalProperties"].(bool); ok && !closed {
		byName["additionalProperties"] = false
	}
	if len(required) > 0 {
		byName["required"] = required
	}
	byPosition := map[string]any{"type": "array", "maxItems": len(prefix)}
	if len(prefix) > 0 {
		byPosition["prefixItems"] = prefix
	}
	if lastRequired > 0 {
		byPosition["minItems"] = lastRequired
	}
	var ps map[string]any
	switch structure {
	case "by-name":
		ps = byName
	case "by-position":
		ps, meth.Positional = byPosition, true
	default: // "either"; absent params read as [] are fine both ways
		ps, meth.Positional = map[string]any{"anyOf": []any{byPosition, byName}}, true
		for _, form := range []map[string]any{byPosition, byName} {
			f, err := selfContained(form, schemas)
			if err != nil {
				return meth, err
			}
			meth.forms = append(meth.forms, f)
		}
	}
	var err error
	if meth.Params, err = selfContained(ps, schemas); err != nil {
		return meth, err
	}
	if res := descriptor(m["result"], descriptors); res != nil && res["schema"] != nil {
		rs := res["schema"]
		wrapped, ok := rs.(map[string]any)
		if !ok {
			wrapped = map[string]any{"allOf": []any{rs}}
		}
		if meth.Result, err = selfContained(wrapped, schemas); err != nil {
			return meth, err
		}
	}
	return meth, nil
}

// descriptor is a content descriptor, followed when it is a reference.
func descriptor(d any, descriptors map[string]any) map[string]any {
	m, _ := d.(map[string]any)
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, descriptorRefPrefix) {
		m, _ = descriptors[unescapePointer(strings.TrimPrefix(ref, descriptorRefPrefix))].(map[string]any)
	}
	return m
}

// selfContained rewrites the references of schema s to the document's
// named schemas into #/$defs/NAME, carries every named schema it reaches
// in s's $defs, and returns the JSON.
func selfContained(s map[string]any, named map[string]any) ([]byte, error) {
	var order []string
	seen := map[string]bool{}
	var rewrite func(x any) any
	rewrite = func(x any) any {
		switch v := x.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, e := range v {
				if ref, ok := e.(string); k == "$ref" && ok && strings.HasPrefix(ref, schemaRefPrefix) {
					name := unescapePointer(strings.TrimPrefix(ref, schemaRefPrefix))
					if !seen[name] {
						seen[name] = true
						order = append(order, name)
					}
					out[k] = defsPrefix + escapePointer(name)
					continue
				}
				out[k] = rewrite(e)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = rewrite(e)
			}
			return out
		}
		return x
	}
	out := rewrite(s).(map[string]any)
	defs := map[string]any{}
	if old, ok := out["$defs"].(map[string]any); ok {
		defs = old
	}
	for i := 0; i < len(order); i++ { // order grows as definitions are copied
		def, ok := named[order[i]]
		if !ok {
			return nil, fmt.Errorf("the schema refers to %s%s, which the document does not define", schemaRefPrefix, order[i])
		}
		defs[order[i]] = rewrite(def)
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return json.Marshal(out)
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
