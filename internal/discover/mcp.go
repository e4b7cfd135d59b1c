package discover

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"go.yaml.in/yaml/v3"
)

// MCPLists are the results of an MCP server's list requests (each with its
// pages joined); nil for one the server does not offer.
type MCPLists struct {
	Tools     []byte // tools/list: {"tools": [...]}
	Prompts   []byte // prompts/list: {"prompts": [{name, description, arguments: [{name, required}]}]}
	Resources []byte // resources/list: {"resources": [{uri, name, description}]}
}

// FromMCP writes a scenario (YAML) that calls every tool, prompt and
// resource of an MCP server. lists.Tools is required; each tool becomes a
// call named after it, of method tools/call with params {name: TOOL,
// arguments: ...}, the arguments generated from its inputSchema as
// FromOpenRPC does for params; its description, on one line, is the comment
// above the call. Each prompt becomes one prompts/get (its required
// arguments filled with generated strings; prompt arguments are strings)
// and each resource one resources/read, named "prompt:NAME" and
// "resource:NAME"; those lists are optional. The profile is {name: mcp},
// with mcp_era: profileEra when that is not "". target may be "" (given on
// the command line then).
func FromMCP(lists MCPLists, target string, profileEra string, r *rand.Rand) ([]byte, error) {
	if r == nil {
		return nil, errors.New("discover: nil random source")
	}
	toolsList := lists.Tools
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
		c := call{method: "tools/call", name: uniqueName(name, used)}
		describe(&c, t)
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
	if err := s.addPrompts(lists.Prompts, used); err != nil {
		return nil, err
	}
	if err := s.addResources(lists.Resources, used); err != nil {
		return nil, err
	}
	if len(lists.Prompts) > 0 || len(lists.Resources) > 0 {
		s.header[0] = "Written by rpcload scenario from-mcp from the server's tools, prompts and resources lists."
		s.header[1] = "One call per tool (tools/call), prompt (prompts/get) and resource (resources/read), weight 1."
	}
	out, err := s.render()
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	return out, nil
}

// uniqueName returns name, or name#N when it was used before.
func uniqueName(name string, used map[string]int) string {
	if used[name]++; used[name] > 1 {
		return fmt.Sprintf("%s#%d", name, used[name])
	}
	return name
}

// describe adds an item's description (or title) as the call's comment.
func describe(c *call, item *yaml.Node) {
	if d, _ := getStr(item, "description"); d != "" {
		c.comments = append(c.comments, oneLine(d, 100))
	} else if d, _ := getStr(item, "title"); d != "" {
		c.comments = append(c.comments, oneLine(d, 100))
	}
}

// listItems returns the items under key of an MCP list result (method
// names it in errors); none when the result is empty, lacks key or has null.
func listItems(list []byte, method, key string) ([]*yaml.Node, error) {
	if len(list) == 0 {
		return nil, nil
	}
	root, err := parseJSON(list)
	if err != nil {
		return nil, fmt.Errorf("discover: the %s result is not JSON: %w", method, err)
	}
	items := get(root, key)
	if items == nil || items.Tag == "!!null" {
		return nil, nil // the server lists none
	}
	if items.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("discover: the %s result has no %q list", method, key)
	}
	return items.Content, nil
}

// addPrompts adds a prompts/get per prompt of a prompts/list result.
func (s *file) addPrompts(list []byte, used map[string]int) error {
	prompts, err := listItems(list, "prompts/list", "prompts")
	if err != nil {
		return err
	}
	for _, p := range prompts {
		name, ok := getStr(p, "name")
		if !ok || name == "" {
			continue
		}
		c := call{method: "prompts/get", name: uniqueName("prompt:"+name, used)}
		describe(&c, p)
		args := mapping()
		if list := get(p, "arguments"); list != nil && list.Kind == yaml.SequenceNode {
			for _, a := range list.Content {
				an, ok := getStr(a, "name")
				if req := get(a, "required"); !ok || req == nil || req.Value != "true" {
					continue // optional arguments are left out
				}
				args.Content = append(args.Content, str(an), generator("$string", num(8)))
			}
		}
		c.params = mapping("name", str(name), "arguments", args)
		s.calls = append(s.calls, c)
	}
	return nil
}

// addResources adds a resources/read per resource of a resources/list result.
func (s *file) addResources(list []byte, used map[string]int) error {
	resources, err := listItems(list, "resources/list", "resources")
	if err != nil {
		return err
	}
	for _, res := range resources {
		uri, ok := getStr(res, "uri")
		if !ok || uri == "" {
			continue
		}
		name, _ := getStr(res, "name")
		if name == "" {
			name = uri
		}
		c := call{method: "resources/read", name: uniqueName("resource:"+name, used)}
		describe(&c, res)
		c.params = mapping("uri", str(uri))
		s.calls = append(s.calls, c)
	}
	return nil
}
