package discover

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"go.yaml.in/yaml/v3"
)

// FromMCPTools writes a scenario (YAML) that calls every tool of an MCP
// server: toolsList is the JSON result of tools/list ({"tools": [{name,
// description, inputSchema}, ...]}, the pages joined). Each tool becomes a
// call named after it, of method tools/call with params {name: TOOL,
// arguments: ...}, the arguments generated from its inputSchema as
// FromOpenRPC does for params; its description, on one line, is the comment
// above the call. The profile is {name: mcp}, with mcp_era: profileEra when
// that is not "". target may be "" (given on the command line then).
func FromMCPTools(toolsList []byte, target string, profileEra string, r *rand.Rand) ([]byte, error) {
	if r == nil {
		return nil, errors.New("discover: nil random source")
	}
	root, err := parseJSON(toolsList)
	if err != nil {
		return nil, fmt.Errorf("discover: the tools/list result is not JSON: %w", err)
	}
	tools := get(root, "tools")
	if tools == nil || tools.Kind != yaml.SequenceNode {
		return nil, errors.New(`discover: the tools/list result has no "tools" list`)
	}
	s := &file{target: target, profile: mapping("name", str("mcp"))}
	if profileEra != "" {
		s.profile.Content = append(s.profile.Content, str("mcp_era"), str(profileEra))
	}
	s.header = []string{
		"Written by rpcload scenario from-mcp from the server's tools/list.",
		"One tools/call per tool, weight 1; arguments are generated from each inputSchema.",
		"Review the arguments, weights and load before a real run.",
	}
	used := map[string]int{}
	for i, t := range tools.Content {
		name, ok := getStr(t, "name")
		if !ok || name == "" {
			s.skipped = append(s.skipped, fmt.Sprintf("left out: tool %d has no name", i))
			continue
		}
		c := call{method: "tools/call", name: name}
		if used[name]++; used[name] > 1 {
			c.name = fmt.Sprintf("%s#%d", name, used[name])
		}
		if d, _ := getStr(t, "description"); d != "" {
			c.comments = append(c.comments, oneLine(d, 100))
		} else if d, _ := getStr(t, "title"); d != "" {
			c.comments = append(c.comments, oneLine(d, 100))
		}
		schema := get(t, "inputSchema")
		var args *yaml.Node
		if schema != nil {
			var notes []string
			args, notes, err = value(clone(schema), r)
			for _, n := range notes {
				c.comments = append(c.comments, oneLine(n, 120))
			}
			if err != nil {
				c.comments = append(c.comments, oneLine(fmt.Sprintf("no arguments generated (%v); fill them in", err), 160))
				args = nil
			}
		}
		if args == nil || args.Kind != yaml.MappingNode {
			args = mapping()
		}
		c.params = mapping("name", str(name), "arguments", args)
		s.calls = append(s.calls, c)
	}
	out, err := s.render()
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	return out, nil
}
