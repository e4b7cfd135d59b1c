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

// maxToolPages bounds how many tools/list pages are read (a server whose
// cursor never ends must not hold the run up).
const maxToolPages = 20

// listTools reads the server's tools/list, following nextCursor, with
// request sending one request and returning its reply.
func listTools(p profile.Profile, era profile.Era, request func(method string, params []byte) ([]byte, error)) ([]string, error) {
	var names []string
	cursor := ""
	for range maxToolPages {
		var params []byte
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
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
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &page); err != nil {
			return nil, fmt.Errorf("tools/list result: %w", err)
		}
		for _, t := range page.Tools {
			names = append(names, t.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
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
