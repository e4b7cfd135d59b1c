package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/profile"
)

// apiFlags are the flags of "rpcfuzz run" that say what the target's API
// is: its methods and their params' schemas (docs/fuzzing.md, "Fuzz your
// own API").
type apiFlags struct {
	openrpc     string
	file        string
	discover    bool
	workspace   string
	seeds       seedList
	idempotent  []string
	paramsCodes []int64
	share       float64
}

// seedList is what --method and --params build together: pflag sets both
// in command-line order, so a --params belongs to the --method before it.
type seedList struct {
	entries []seedEntry
}

type seedEntry struct {
	method    string
	params    []byte
	hasParams bool
}

// methodValue is --method's side of a seedList.
type methodValue struct{ l *seedList }

func (v methodValue) String() string { return "" }
func (v methodValue) Type() string   { return "string" }
func (v methodValue) Set(s string) error {
	if s == "" {
		return errors.New("a method name must not be empty")
	}
	v.l.entries = append(v.l.entries, seedEntry{method: s})
	return nil
}

// paramsValue is --params's side of a seedList.
type paramsValue struct{ l *seedList }

func (v paramsValue) String() string { return "" }
func (v paramsValue) Type() string   { return "json" }
func (v paramsValue) Set(s string) error {
	n := len(v.l.entries)
	switch {
	case n == 0:
		return errors.New("give --method M before its --params")
	case v.l.entries[n-1].hasParams:
		return fmt.Errorf("--method %s has its --params already: give --method again for another call", v.l.entries[n-1].method)
	}
	v.l.entries[n-1].params, v.l.entries[n-1].hasParams = []byte(s), true
	return nil
}

func (f *apiFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.openrpc, "openrpc", "", "the target's API as an OpenRPC document (a file): its methods are called with params valid and invalid by their schemas, and held to them")
	fs.StringVarP(&f.file, "file", "f", "", "a scenario file (rpcload's format): its calls' methods join the API, with the params their templates render as examples")
	fs.BoolVar(&f.discover, "discover", false, "ask the target for its API: rpc.discover's OpenRPC document, with --profile mcp its tools, prompts and resources, with --profile lsp the requests its capabilities announce, about the --workspace files (on by default with --profile mcp, and with --profile lsp and --workspace)")
	fs.StringVar(&f.workspace, "workspace", "", "--profile lsp: the folder the language server is initialized with (rootUri, workspaceFolders), whose files (up to 8 of a known language, 64 KiB each) every connection opens after the handshake")
	fs.Var(methodValue{&f.seeds}, "method", "a method of the target's API to call (repeatable); its --params follow it")
	fs.Var(paramsValue{&f.seeds}, "params", "JSON params known to be good for the --method before it (for tools/call: {\"name\": TOOL, \"arguments\": {...}})")
	fs.StringArrayVar(&f.idempotent, "idempotent", nil, "a method (or 'tool NAME') whose equal calls must get equal results (repeatable)")
	fs.Int64SliceVar(&f.paramsCodes, "invalid-params-code", nil, "an error code a call with params its schema rejects may be refused with (repeatable; default -32602)")
	fs.Float64Var(&f.share, "api-share", fuzz.DefaultAPIShare, "with an API, the share of inputs that are fresh calls of its methods (the others mutate the corpus)")
}

// apply puts the API's flags in cfg.
func (f *apiFlags) apply(fs *pflag.FlagSet, cfg *fuzz.Config) error {
	if !(f.share > 0 && f.share <= 1) {
		return cli.Usagef("--api-share must be more than 0 and at most 1 (got %g)", f.share)
	}
	cfg.APIShare = f.share
	cfg.Idempotent = f.idempotent
	cfg.InvalidParamsCodes = f.paramsCodes
	cfg.Discover = f.discover
	if err := f.applyWorkspace(cfg); err != nil {
		return err
	}
	if !fs.Changed("discover") && (cfg.Profile == profile.MCP || cfg.Profile == profile.LSP && f.workspace != "") {
		cfg.Discover = true
	}
	if cfg.Discover && cfg.Profile == profile.LSP && f.workspace == "" {
		return cli.Usagef("--discover with --profile lsp needs --workspace DIR: the requests the server announces are asked about the workspace's files")
	}
	api := &apispec.API{}
	if f.openrpc != "" {
		doc, err := os.ReadFile(f.openrpc)
		if err != nil {
			return cli.Usagef("--openrpc: %v", err)
		}
		got, err := apispec.FromOpenRPC(doc)
		if err != nil {
			return cli.Usagef("--openrpc %s: %v", f.openrpc, err)
		}
		if err := api.Merge(got); err != nil {
			return cli.Usagef("--openrpc %s: %v", f.openrpc, err)
		}
	}
	if f.file != "" {
		got, err := scenarioAPI(f.file)
		if err != nil {
			return err
		}
		if err := api.Merge(got); err != nil {
			return cli.Usagef("-f %s: %v", f.file, err)
		}
	}
	for _, e := range f.seeds.entries {
		var params []byte
		if e.hasParams {
			params = e.params
		}
		m, err := apispec.Seed(e.method, params)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		if err := api.Add(m); err != nil {
			return cli.Usagef("--method %s: %v", e.method, err)
		}
	}
	if api.Len() > 0 {
		cfg.API = api
	}
	if len(f.idempotent) > 0 && api.Len() == 0 && !cfg.Discover {
		return cli.Usagef("--idempotent needs an API: --openrpc, --discover, -f or --method")
	}
	for _, c := range f.paramsCodes {
		if c < -1<<31 || c > 1<<31-1 {
			return cli.Usagef("--invalid-params-code %s: not a JSON-RPC error code", strconv.FormatInt(c, 10))
		}
	}
	return nil
}

// applyWorkspace puts --workspace in cfg: the LSP profile's workspace
// folder, as an absolute path (the URIs of the folder and its files are
// made from it), which must be a directory.
func (f *apiFlags) applyWorkspace(cfg *fuzz.Config) error {
	if f.workspace == "" {
		return nil
	}
	if cfg.Profile != profile.LSP {
		return cli.Usagef("--workspace applies to --profile lsp (got --profile %s)", cfg.Profile)
	}
	dir, err := workspaceDir(f.workspace)
	if err != nil {
		return err
	}
	cfg.ProfileOptions.Workspace = dir
	return nil
}

// workspaceDir is --workspace's value as an absolute path (the URIs of the
// folder and its files are made from it), which must be a directory.
func workspaceDir(value string) (string, error) {
	dir, err := filepath.Abs(value)
	if err != nil {
		return "", cli.Usagef("--workspace: %v", err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return "", cli.Usagef("--workspace %s: %v", value, err)
	}
	return dir, nil
}
