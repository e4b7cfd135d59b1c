package discover

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rpcload/rpcload/internal/schemagen"
)

// lineWidth is the width under which a collection is written in flow style.
const lineWidth = 72

// call is one entry of the mix being written.
type call struct {
	comments []string   // lines above the call
	method   string     // the JSON-RPC method
	name     string     // the call's name, when it differs from the method
	params   *yaml.Node // nil: no params
	expect   *yaml.Node // the result schema, or nil
}

// file is the whole scenario file being written.
type file struct {
	header  []string   // the comment at the top
	target  string     // "" leaves the key out
	profile *yaml.Node // nil for plain JSON-RPC
	skipped []string   // comment lines above mix
	calls   []call
}

// render writes the scenario as YAML: keys in a fixed order, 2-space
// indent, short collections in flow style, a blank line between calls.
func (s *file) render() ([]byte, error) {
	root := mapping("version", num(1))
	root.Content[0].HeadComment = commentBlock(s.header)
	if s.target != "" {
		root.Content = append(root.Content, str("target"), str(s.target))
	}
	if s.profile != nil {
		setFlow(s.profile)
		root.Content = append(root.Content, str("profile"), s.profile)
	}
	load := mapping("rate", num(100), "duration", str("30s"))
	setFlow(load)
	root.Content = append(root.Content, str("load"), load)
	mix := seq()
	for _, c := range s.calls {
		item := mapping("method", str(c.method))
		if c.name != "" {
			item.Content = append(item.Content, str("name"), str(c.name))
		}
		item.Content = append(item.Content, str("weight"), num(1))
		if c.params != nil {
			layout(c.params, lineWidth-len("    params: "))
			item.Content = append(item.Content, str("params"), c.params)
		}
		if c.expect != nil {
			e := mapping("result", c.expect)
			layout(e, lineWidth-len("    expect: "))
			item.Content = append(item.Content, str("expect"), e)
		}
		item.HeadComment = commentBlock(c.comments)
		mix.Content = append(mix.Content, item)
	}
	mixKey := str("mix")
	mixKey.HeadComment = commentBlock(s.skipped)
	root.Content = append(root.Content, mixKey, mix)
	if len(s.calls) == 0 {
		return nil, fmt.Errorf("no method to call")
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return spaceCalls(buf.Bytes()), nil
}

// commentBlock writes lines as YAML comments. A comment holds its text as
// it is, so a character YAML does not allow in a file (a control
// character from a server's description: DEL, C1 codes) is shown as '·',
// and a line break as a space.
func commentBlock(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "# " + strings.Map(yamlPrintable, l)
		if l == "" {
			out[i] = "#"
		}
	}
	return strings.Join(out, "\n")
}

// yamlPrintable maps r to itself when YAML 1.2 allows it in a comment
// (c-printable, line breaks aside), a line break or tab to a space, and
// anything else to '·'.
func yamlPrintable(r rune) rune {
	switch {
	case r == '\n' || r == '\r' || r == '\t' || r == 0x85:
		return ' '
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd && r != 0xfeff, r >= 0x10000 && r <= 0x10ffff:
		return r
	}
	return '·'
}

// spaceCalls puts a blank line before each call of the mix but the first
// (before its comment, when it has one).
func spaceCalls(b []byte) []byte {
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	inMix, first, prevComment := false, true, false
	for _, l := range lines {
		if strings.HasPrefix(l, "mix:") {
			inMix = true
		}
		item := inMix && (strings.HasPrefix(l, "  - ") || strings.HasPrefix(l, "  # "))
		if item && !first && !prevComment {
			out.WriteString("\n")
		}
		if item {
			first = false
		}
		prevComment = inMix && strings.HasPrefix(l, "  # ")
		out.WriteString(l)
	}
	return []byte(out.String())
}

// value builds a call's param (or MCP arguments) from a self-contained
// schema: a generator where one maps onto the schema, else a literal from
// schemagen with generators for the members that map. It returns the notes
// worth a comment.
func value(schema *yaml.Node, r *rand.Rand) (*yaml.Node, []string, error) {
	gens := map[*yaml.Node]bool{}
	if g := generatorFor(schema, schema, 0); g != nil {
		return g, nil, nil
	}
	lit, notes, err := schemagen.ValidNotes(toJSON(schema), r)
	if err != nil {
		return nil, notes, err
	}
	v, err := parseJSON(lit)
	if err != nil {
		return nil, notes, err
	}
	v = overlay(v, schema, schema, gens, 0)
	escapeKeys(v, gens)
	return v, notes, nil
}
