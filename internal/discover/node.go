package discover

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxNesting bounds the nesting of a discovery document.
const maxNesting = 256

// parseJSON decodes a JSON document into a YAML node tree, keeping the order
// of object members (so schemas come out as their authors wrote them).
// Strings are !!str, numbers !!int or !!float with their JSON text.
func parseJSON(data []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON document")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, depth int) (*yaml.Node, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("nested deeper than %d", maxNesting)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if t == '[' {
			n = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if old := get(n, k); old != nil { // a duplicate key: the last wins
					*old = *v
					continue
				}
				n.Content = append(n.Content, str(k), v)
				continue
			}
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		return str(t), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, errors.New("bad JSON")
}

// toJSON encodes a node tree made by parseJSON (or built alike) as JSON.
func toJSON(n *yaml.Node) []byte { return appendJSON(nil, n) }

func appendJSON(b []byte, n *yaml.Node) []byte {
	switch n.Kind {
	case yaml.MappingNode:
		b = append(b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b = append(b, k...)
			b = append(b, ':')
			b = appendJSON(b, n.Content[i+1])
		}
		return append(b, '}')
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, e := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	}
	switch n.Tag {
	case "!!str":
		s, _ := json.Marshal(n.Value)
		return append(b, s...)
	case "!!null":
		return append(b, "null"...)
	}
	return append(b, n.Value...) // numbers and booleans are their JSON text
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func num(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(v)}
}

// mapping builds a mapping node from alternating keys and values.
func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		v, ok := kv[i+1].(*yaml.Node)
		if !ok {
			v = str(fmt.Sprint(kv[i+1]))
		}
		n.Content = append(n.Content, str(kv[i].(string)), v)
	}
	return n
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// generator is the template {$name: arg}, written in flow style.
func generator(name string, arg *yaml.Node) *yaml.Node {
	n := mapping(name, arg)
	setFlow(n)
	return n
}

// get returns the value of key k in mapping n, or nil.
func get(n *yaml.Node, k string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}

func getStr(n *yaml.Node, k string) (string, bool) {
	v := get(n, k)
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return "", false
	}
	return v.Value, true
}

func clone(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		c.Content[i] = clone(e)
	}
	return &c
}

func setFlow(n *yaml.Node) {
	n.Style = yaml.FlowStyle
	for _, c := range n.Content {
		setFlow(c)
	}
}

// flowWidth is the width of a node written in flow style, roughly; -1 when
// it does not fit in max.
func flowWidth(n *yaml.Node, max int) int {
	w := 0
	switch n.Kind {
	case yaml.ScalarNode:
		w = len(n.Value) + 2
	default:
		w = 2
		for _, c := range n.Content {
			cw := flowWidth(c, max-w)
			if cw < 0 {
				return -1
			}
			w += cw + 2
		}
	}
	if w > max {
		return -1
	}
	return w
}

// layout writes short collections in flow style ({a: 1}, [x, y]) and long
// ones as blocks, each child deciding again.
func layout(n *yaml.Node, width int) {
	if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode {
		return
	}
	if n.Style == yaml.FlowStyle || flowWidth(n, width) >= 0 {
		setFlow(n)
		return
	}
	for _, c := range n.Content {
		layout(c, width-2)
	}
}

// escapeKeys doubles the "$" of literal keys that start with one, so the
// scenario reader does not take them for generators; generator nodes (marked
// by the set) are left alone.
func escapeKeys(n *yaml.Node, gens map[*yaml.Node]bool) {
	if gens[n] {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if strings.HasPrefix(n.Content[i].Value, "$") {
				n.Content[i].Value = "$" + n.Content[i].Value
			}
		}
	}
	for _, c := range n.Content {
		escapeKeys(c, gens)
	}
}

// oneLine turns free text (a description) into a single comment line.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return s
}
