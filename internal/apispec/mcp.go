package apispec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rpcload/rpcload/internal/wire"
)

// MCP's methods for the things a server lists.
const (
	MCPToolsCall     = "tools/call"
	MCPPromptsGet    = "prompts/get"
	MCPResourcesRead = "resources/read"
)

// FromMCP reads the results of an MCP server's list requests, each with its
// pages joined (nil for a list the server does not offer; tools is
// required): every tool with its inputSchema as the schema of its
// arguments and its outputSchema as the schema of structuredContent; every
// prompt with a schema made of its arguments (strings, the required ones
// required, any other argument a string too, as MCP's GetPromptRequest
// says); and resources/read, with each listed resource's URI as an
// example. A tool's idempotentHint is not taken for Idempotent: it says
// a repeated call has no further effect on the world, not that it answers
// the same.
func FromMCP(tools, prompts, resources []byte) (*API, error) {
	var tl struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(tools, &tl); err != nil {
		return nil, fmt.Errorf("the tools/list result: %w", err)
	}
	api := &API{}
	for i, t := range tl.Tools {
		if t.Name == "" {
			api.Notes = append(api.Notes, fmt.Sprintf("left out: tool %d has no name", i))
			continue
		}
		m := Method{Call: MCPToolsCall, Kind: Tool, Target: t.Name, Source: "mcp",
			Params: schemaOrNil(t.InputSchema), Result: schemaOrNil(t.OutputSchema)}
		if err := api.Add(m); err != nil {
			return nil, err
		}
	}
	if prompts != nil {
		if err := addPrompts(api, prompts); err != nil {
			return nil, err
		}
	}
	if resources != nil {
		if err := addResources(api, resources); err != nil {
			return nil, err
		}
	}
	return api, nil
}

func schemaOrNil(raw json.RawMessage) []byte {
	if t := wire.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		return t
	}
	return nil
}

func addPrompts(api *API, list []byte) error {
	var pl struct {
		Prompts []struct {
			Name      string `json:"name"`
			Arguments []struct {
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"arguments"`
		} `json:"prompts"`
	}
	if err := json.Unmarshal(list, &pl); err != nil {
		return fmt.Errorf("the prompts/list result: %w", err)
	}
	for i, p := range pl.Prompts {
		if p.Name == "" {
			api.Notes = append(api.Notes, fmt.Sprintf("left out: prompt %d has no name", i))
			continue
		}
		props := map[string]any{}
		required := []string{}
		for _, a := range p.Arguments {
			props[a.Name] = map[string]any{"type": "string"}
			if a.Required {
				required = append(required, a.Name)
			}
		}
		// (additionalProperties: MCP's GetPromptRequestParams makes every
		// argument a string, listed or not.)
		schema, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required,
			"additionalProperties": map[string]any{"type": "string"}})
		if err != nil {
			return err
		}
		if err := api.Add(Method{Call: MCPPromptsGet, Kind: Prompt, Target: p.Name, Source: "mcp", Params: schema}); err != nil {
			return err
		}
	}
	return nil
}

// resourcesReadSchema is the params of resources/read.
const resourcesReadSchema = `{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}`

func addResources(api *API, list []byte) error {
	var rl struct {
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(list, &rl); err != nil {
		return fmt.Errorf("the resources/list result: %w", err)
	}
	if len(rl.Resources) == 0 {
		return nil
	}
	m := Method{Call: MCPResourcesRead, Source: "mcp", Params: []byte(resourcesReadSchema)}
	for _, r := range rl.Resources {
		ex, err := json.Marshal(map[string]string{"uri": r.URI})
		if err != nil {
			return err
		}
		m.Examples = append(m.Examples, ex)
	}
	return api.Add(m)
}

// Seed is a method given on the command line with params known to be good
// (--method M --params JSON): params is a JSON array or object, or nil.
// A tools/call or prompts/get seed names its tool or prompt: its params
// must be {"name": NAME, "arguments": {...}}, and the arguments become the
// example.
func Seed(method string, params []byte) (Method, error) {
	if method == "" {
		return Method{}, errors.New("--method needs a method name")
	}
	m := Method{Call: method, Source: "flag"}
	if params == nil {
		return m, nil
	}
	params = wire.TrimSpace(params)
	if !json.Valid(params) || len(params) == 0 || params[0] != '{' && params[0] != '[' {
		return Method{}, fmt.Errorf("--params for %s: want a JSON object or array, got %.80q", method, params)
	}
	if method == MCPToolsCall || method == MCPPromptsGet {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
			return Method{}, fmt.Errorf(`--params for %s: want {"name": NAME, "arguments": {...}}`, method)
		}
		m.Kind, m.Target = Tool, p.Name
		if method == MCPPromptsGet {
			m.Kind = Prompt
		}
		if args := schemaOrNil(p.Arguments); args != nil {
			m.Examples = []json.RawMessage{args}
		}
		return m, nil
	}
	m.Positional = params[0] == '['
	m.Examples = []json.RawMessage{params}
	return m, nil
}
