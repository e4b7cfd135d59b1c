package discover

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"go.yaml.in/yaml/v3"
)

// OpenRPC's reference prefixes.
const (
	schemaRefPrefix     = "#/components/schemas/"
	descriptorRefPrefix = "#/components/contentDescriptors/"
)

// FromOpenRPC writes a scenario (YAML) that calls every method of an OpenRPC
// document (https://spec.open-rpc.org) once per mix round: weight 1, params
// generated from each param's schema, and expect: {result: SCHEMA} when the
// method declares a result. Params are positional unless the method's
// paramStructure is "by-name"; every param is given, required or not.
// A param whose schema maps onto a scenario generator ($int, $choice,
// $uuid, $hex, $hexint, $string, $now) gets that generator, so it varies
// from request to request; any other gets a literal made by schemagen.Valid,
// with generators for its members that map. Schemas are written
// self-contained: references to #/components/schemas/NAME become
// #/$defs/NAME with the definitions carried along. Methods named "rpc.*"
// belong to JSON-RPC itself and are left out (with a comment). target ""
// takes the document's first server URL, if any. r drives every choice, so a
// seed gives the same file.
func FromOpenRPC(doc []byte, target string, r *rand.Rand) ([]byte, error) {
	if r == nil {
		return nil, errors.New("discover: nil random source")
	}
	root, err := parseJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("discover: the OpenRPC document is not JSON: %w", err)
	}
	methods := get(root, "methods")
	if methods == nil || methods.Kind != yaml.SequenceNode {
		return nil, errors.New("discover: the OpenRPC document has no methods list")
	}
	components := get(root, "components")
	schemas := get(components, "schemas")
	descriptors := get(components, "contentDescriptors")

	title, _ := getStr(get(root, "info"), "title")
	version, _ := getStr(get(root, "info"), "version")
	spec, _ := getStr(root, "openrpc")
	s := &file{target: target}
	if s.target == "" {
		if servers := get(root, "servers"); servers != nil && servers.Kind == yaml.SequenceNode && len(servers.Content) > 0 {
			s.target, _ = getStr(servers.Content[0], "url")
		}
	}
	s.header = []string{
		fmt.Sprintf("Written by rpcload scenario from-openrpc from %q %s (OpenRPC %s).", oneLine(title, 60), oneLine(version, 20), oneLine(spec, 10)),
		"One call per method, weight 1; params are generated from the param schemas.",
		"Review the params, weights and load before a real run.",
	}
	var skipped []string
	for i, m := range methods.Content {
		name, ok := getStr(m, "name")
		if !ok {
			if ref, isRef := getStr(m, "$ref"); isRef {
				skipped = append(skipped, fmt.Sprintf("left out: method %d is a reference (%s), which is not followed", i, oneLine(ref, 60)))
			} else {
				skipped = append(skipped, fmt.Sprintf("left out: method %d has no name", i))
			}
			continue
		}
		if strings.HasPrefix(name, "rpc.") {
			skipped = append(skipped, fmt.Sprintf("left out: %s (rpc.* methods belong to JSON-RPC itself)", oneLine(name, 60)))
			continue
		}
		c, err := openrpcCall(m, name, schemas, descriptors, r)
		if err != nil {
			return nil, fmt.Errorf("discover: method %s: %w", name, err)
		}
		s.calls = append(s.calls, c)
	}
	s.skipped = skipped
	out, err := s.render()
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	return out, nil
}

// descriptor follows a content descriptor that is a reference.
func descriptor(d, descriptors *yaml.Node) *yaml.Node {
	if ref, ok := getStr(d, "$ref"); ok && strings.HasPrefix(ref, descriptorRefPrefix) {
		return get(descriptors, unescapePointer(strings.TrimPrefix(ref, descriptorRefPrefix)))
	}
	return d
}

func openrpcCall(m *yaml.Node, name string, schemas, descriptors *yaml.Node, r *rand.Rand) (call, error) {
	c := call{method: name}
	summary, _ := getStr(m, "summary")
	if summary == "" {
		summary, _ = getStr(m, "description")
	}
	if summary != "" {
		c.comments = append(c.comments, oneLine(summary, 100))
	}
	if dep := get(m, "deprecated"); dep != nil && dep.Value == "true" {
		c.comments = append(c.comments, "deprecated")
	}
	byName := false
	if ps, _ := getStr(m, "paramStructure"); ps == "by-name" {
		byName = true
	}
	params := get(m, "params")
	if params != nil && params.Kind == yaml.SequenceNode {
		out := seq()
		if byName {
			out = mapping()
		}
		for i, p := range params.Content {
			p = descriptor(p, descriptors)
			pname, _ := getStr(p, "name")
			if pname == "" {
				pname = fmt.Sprintf("#%d", i)
			}
			schema := get(p, "schema")
			if schema == nil {
				schema = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
			}
			sc := selfContained(schema, schemaRefPrefix, schemas)
			v, notes, err := value(sc, r)
			for _, n := range notes {
				c.comments = append(c.comments, oneLine(pname+": "+n, 120))
			}
			if err != nil {
				c.comments = append(c.comments, oneLine(fmt.Sprintf("%s: no value generated (%v); fill it in", pname, err), 160))
				v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
			}
			if byName {
				key := pname
				if strings.HasPrefix(key, "$") {
					key = "$" + key
				}
				out.Content = append(out.Content, str(key), v)
			} else {
				out.Content = append(out.Content, v)
			}
		}
		if len(out.Content) > 0 {
			c.params = out
		}
	}
	if res := descriptor(get(m, "result"), descriptors); res != nil {
		if schema := get(res, "schema"); schema != nil {
			c.expect = selfContained(schema, schemaRefPrefix, schemas)
		}
	}
	return c, nil
}
