package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// ErrNoSuchTool is returned by Run when --tool names a tool the MCP server
// does not list: every call would fail, so the run does not start.
var ErrNoSuchTool = errors.New("no such tool")

// listTools reads the server's tools/list (every page), with request
// sending one request and returning its reply.
func listTools(p profile.Profile, era profile.Era, request func(method string, params []byte) ([]byte, error)) ([]string, error) {
	list, err := profile.ListAll("tools/list", "tools", func(params []byte) ([]byte, error) {
		params, err := p.Params(era, "tools/list", params)
		if err != nil {
			return nil, err
		}
		rep, err := request("tools/list", params)
		if err != nil {
			return nil, err
		}
		var m wire.Message
		if wire.Scan(rep, &m); m.Kind != wire.KindResult {
			return nil, fmt.Errorf("tools/list was not answered with a result: %.200s", rep)
		}
		return m.Result, nil
	})
	if err != nil {
		return nil, err
	}
	var all struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list, &all); err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
	}
	names := make([]string, 0, len(all.Tools))
	for _, t := range all.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}

// checkTool lists the tools and fails unless the run's --tool is one of
// them; it keeps the list for the report.
func (r *run) checkTool(era profile.Era, request func(method string, params []byte) ([]byte, error)) error {
	if r.cfg.Tool == "" || r.prof.Name() != profile.MCP {
		return nil
	}
	names, err := listTools(r.prof, era, request)
	if err != nil {
		return fmt.Errorf("listing the server's tools: %w", err)
	}
	r.tools = names
	if !slices.Contains(names, r.cfg.Tool) {
		shown := names
		if len(shown) > 20 {
			shown = append(shown[:20:20], "…")
		}
		return fmt.Errorf("%w: the server offers no tool %q (tools/list: %s)", ErrNoSuchTool, r.cfg.Tool, strings.Join(shown, ", "))
	}
	return nil
}
