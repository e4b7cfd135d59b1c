package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
)

// profileFlags are the flags of the ecosystem layer (--profile and the
// flags that only make sense with one profile).
type profileFlags struct {
	name      string
	mcpEra    string
	tool      string
	toolArgs  string
	workspace string
	open      string
}

func (f *profileFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.name, "profile", "jsonrpc", "protocol profile: jsonrpc, mcp, lsp or eth (handshake, params, answers to server requests, cancellation, rules); an HTTP server answering in SSE needs mcp")
	fs.StringVar(&f.mcpEra, "mcp-era", "auto", "mcp: auto (detect), modern (2026-07-28), legacy (2025-11-25) or a revision date")
	fs.StringVar(&f.tool, "tool", "", "mcp: call this tool (method tools/call, params {\"name\":TOOL,\"arguments\":ARGS})")
	fs.StringVar(&f.toolArgs, "args", "{}", "mcp: the tool's arguments, a JSON object (with --tool)")
	fs.StringVar(&f.workspace, "workspace", "", "lsp: the workspace directory (rootUri and the one workspace folder)")
	fs.StringVar(&f.open, "open", "", "lsp: open this file (textDocument/didOpen) on every connection before the load; params default to {\"textDocument\":{\"uri\":...}} of it")
}

// presetMethod fills --method and --params from --tool before --method is
// checked.
func (f *profileFlags) presetMethod(fs *pflag.FlagSet, rf *runFlags) error {
	if f.tool == "" {
		if fs.Changed("args") {
			return usagef("--args goes with --tool")
		}
		return nil
	}
	if f.name != string(profile.MCP) {
		return usagef("--tool needs --profile mcp")
	}
	if rf.method != "" && rf.method != "tools/call" {
		return usagef("--tool calls tools/call; it excludes --method %s", rf.method)
	}
	if rf.params != "" {
		return usagef("--tool builds the params from --args; it excludes --params")
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(f.toolArgs), &args); err != nil || args == nil {
		return usagef("--args must be a JSON object (got %.60q)", f.toolArgs)
	}
	p := append([]byte(`{"name":`), wire.AppendString(nil, f.tool)...)
	p = append(p, `,"arguments":`...)
	p = append(p, f.toolArgs...)
	rf.method, rf.params = "tools/call", string(append(p, '}'))
	return nil
}

// apply builds the profile and adds it, and its opening steps, to c. It
// returns the params --open gives a call of --method that has none.
// Errors name a setting as the user wrote it: a flag, or the key of the
// scenario sc that gave it.
func (f *profileFlags) apply(fs *pflag.FlagSet, c *engine.Config, sc *scenarioFlags) (openParams string, err error) {
	setting := func(key string) string { return workload.SettingName(sc.sc, fs.Changed, key) }
	name := profile.Name(f.name)
	for flag, want := range map[string]profile.Name{"mcp-era": profile.MCP, "workspace": profile.LSP, "open": profile.LSP} {
		if (fs.Changed(flag) || sc.gives(fs, flag)) && name != want {
			return "", usagef("%s needs %s %s", setting(flag), setting("profile"), want)
		}
	}
	o := profile.Options{MCPEra: f.mcpEra, ProcessID: os.Getpid()}
	if name != profile.MCP {
		o.MCPEra = ""
	}
	if f.workspace != "" {
		abs, err := absDir(f.workspace)
		if err != nil {
			return "", usagef("%s: %v", setting("workspace"), err)
		}
		o.Workspace = abs
	}
	p, err := profile.New(name, o)
	if err != nil {
		return "", usagef("%s: %v", setting("profile"), err)
	}
	c.Profile, c.Tool = p, f.tool
	if f.open != "" {
		abs, err := filepath.Abs(f.open)
		if err != nil {
			return "", usagef("%s: %v", setting("open"), err)
		}
		text, err := os.ReadFile(abs)
		if err != nil {
			return "", usagef("%s: %v", setting("open"), err)
		}
		if len(text) > c.MaxFrame/2 {
			return "", usagef("%s: %s is %d bytes; raise %s to send it", setting("open"), f.open, len(text), setting("max-frame"))
		}
		c.Steps = append(c.Steps, profile.DidOpen(abs, text))
		uri := wire.AppendString(nil, profile.FileURI(abs))
		openParams = string(append(append([]byte(`{"textDocument":{"uri":`), uri...), '}', '}'))
	}
	return openParams, nil
}

func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return abs, nil
}
