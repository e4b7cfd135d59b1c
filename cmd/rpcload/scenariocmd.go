package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/discover"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

var scenarioHelp = cmdHelp{
	usage: []string{
		"rpcload scenario from-openrpc (FILE | --discover TARGET) [flags]",
		"rpcload scenario from-mcp (TARGET | -- COMMAND [ARGS...]) [flags]",
	},
	about: `Writes a scenario file (docs/scenarios.md) from what a server says it
offers: one call per method of an OpenRPC document, or one tools/call per
tool an MCP server lists. "rpcload scenario from-openrpc --help" and
"rpcload scenario from-mcp --help" list their flags.`,
	examples: []string{
		"rpcload scenario from-openrpc openrpc.json -o api.yaml",
		"rpcload scenario from-mcp -- rpcload serve --profile mcp --stdio",
	},
}

var fromOpenRPCHelp = cmdHelp{
	usage: []string{"rpcload scenario from-openrpc FILE [flags]", "rpcload scenario from-openrpc --discover TARGET [flags]"},
	about: `Writes a scenario with one call per method of an OpenRPC document, its
params generated from the method's schemas: the document in FILE, or the
one TARGET's rpc.discover returns.`,
	examples: []string{
		"rpcload scenario from-openrpc openrpc.json -o api.yaml",
		"rpcload scenario from-openrpc --discover http://127.0.0.1:8080/ -o api.yaml",
	},
}

var fromMCPHelp = cmdHelp{
	usage: []string{"rpcload scenario from-mcp TARGET [flags]", "rpcload scenario from-mcp [flags] -- COMMAND [ARGS...]"},
	about: `Writes a scenario with one tools/call per tool an MCP server lists (its
arguments generated from the tool's input schema), reading tools/list, and
prompts/list and resources/list when the server has them.`,
	examples: []string{
		"rpcload scenario from-mcp http://127.0.0.1:8080/mcp -o tools.yaml",
		"rpcload scenario from-mcp -- rpcload serve --profile mcp --stdio",
	},
}

// scenarioCmd is "rpcload scenario from-openrpc|from-mcp": it writes a
// scenario file from what a server says it offers.
func scenarioCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return exitUsage, usagef("scenario needs from-openrpc or from-mcp (see rpcload scenario --help)")
	}
	sub := args[0]
	var h cmdHelp
	switch sub {
	case "from-openrpc":
		h = fromOpenRPCHelp
	case "from-mcp":
		h = fromMCPHelp
	case "help", "-h", "--help":
		scenarioHelp.write(stdout, pflag.NewFlagSet("scenario", pflag.ContinueOnError))
		return exitOK, nil
	default:
		return exitUsage, usagef("scenario %q: want from-openrpc or from-mcp (see rpcload scenario --help)", sub)
	}
	fs := newFlagSet("scenario "+sub, h, stdout, stderr)
	out := fs.StringP("output", "o", "", "write the scenario to this file (atomically) instead of stdout")
	target := fs.String("target", "", "the target the scenario names (default: the one discovered from, or the document's first server)")
	seed := fs.Uint64("seed", 1, "seed of the literal example values")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the server")
	var disc bool
	era := "auto"
	if sub == "from-openrpc" {
		fs.BoolVar(&disc, "discover", false, "ask TARGET's rpc.discover for the document instead of reading a file")
	} else {
		fs.StringVar(&era, "mcp-era", "auto", "the MCP era to speak (auto detects it)")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return helpExit(err)
	}
	rnd := rand.New(rand.NewPCG(*seed, 0))
	var doc []byte
	var err error
	from := ""
	switch {
	case fs.ArgsLenAtDash() == 0 && fs.NArg() > 0:
		from = fs.Args()[0]
	case fs.NArg() == 1:
		from = fs.Arg(0)
	default:
		return exitUsage, usagef("scenario %s takes one FILE or TARGET (or a command after --)", sub)
	}
	connect := func(p profile.Profile) (engine.Config, error) {
		var t transport.Target
		var err error
		if fs.ArgsLenAtDash() == 0 {
			t, err = transport.CommandTarget(fs.Args(), transport.Newline)
		} else {
			t, err = transport.ParseTarget(fs.Arg(0))
		}
		if err != nil {
			return engine.Config{}, usagef("%v", err)
		}
		if *target == "" && t.Scheme != transport.Stdio {
			*target = t.URL
		}
		return engine.Config{Target: t, MaxFrame: 64 << 20, Profile: p, Child: transport.ChildOptions{Grace: 2 * time.Second}, Plan: workload.Plan{Timeout: *timeout, Drain: time.Second, MaxInFlight: 1}}, nil
	}
	switch {
	case sub == "from-openrpc" && !disc:
		if doc, err = os.ReadFile(from); err != nil {
			return exitUsage, usagef("%v", err)
		}
		var yml []byte
		if yml, err = discover.FromOpenRPC(doc, *target, rnd); err != nil {
			return exitUsage, fmt.Errorf("%s: %w", from, err)
		}
		return writeScenarioOut(*out, yml, stdout)
	case sub == "from-openrpc":
		p, _ := profile.New(profile.JSONRPC, profile.Options{})
		cfg, err := connect(p)
		if err != nil {
			return exitUsage, err
		}
		if doc, err = engine.CallOnce(ctx, cfg, "rpc.discover", nil); err != nil {
			return exitCodeOf(err), err
		}
		yml, err := discover.FromOpenRPC(doc, *target, rnd)
		if err != nil {
			return exitFindings, fmt.Errorf("the server's rpc.discover document: %w", err)
		}
		return writeScenarioOut(*out, yml, stdout)
	}
	p, err := profile.New(profile.MCP, profile.Options{MCPEra: era})
	if err != nil {
		return exitUsage, usagef("%v", err)
	}
	cfg, err := connect(p)
	if err != nil {
		return exitUsage, err
	}
	tools, err := listAll(ctx, cfg, "tools/list", "tools")
	if err != nil {
		return exitCodeOf(err), err
	}
	lists := discover.MCPLists{Tools: tools}
	// Prompts and resources are optional capabilities: a server without
	// them refuses the list, and the scenario has tool calls only.
	if p, err := listAll(ctx, cfg, "prompts/list", "prompts"); err == nil {
		lists.Prompts = p
	}
	if r, err := listAll(ctx, cfg, "resources/list", "resources"); err == nil {
		lists.Resources = r
	}
	eraName := ""
	if era != "auto" {
		eraName = era
	}
	yml, err := discover.FromMCP(lists, *target, eraName, rnd)
	if err != nil {
		return exitFindings, fmt.Errorf("the server's tools/list: %w", err)
	}
	return writeScenarioOut(*out, yml, stdout)
}

// listAll reads an MCP list (tools/list, prompts/list, ...) page by page
// and returns one result object holding every item under key.
func listAll(ctx context.Context, cfg engine.Config, method, key string) ([]byte, error) {
	return profile.ListAll(method, key, func(params []byte) ([]byte, error) {
		return engine.CallOnce(ctx, cfg, method, params)
	})
}

func exitCodeOf(err error) int {
	if errors.Is(err, engine.ErrUnreachable) {
		return exitUnreachable
	}
	return exitFindings
}

func writeScenarioOut(path string, yml []byte, stdout io.Writer) (int, error) {
	if path == "" || path == stdoutPath {
		_, err := stdout.Write(yml)
		return exitOK, err
	}
	if err := stats.WriteFileAtomic(path, yml); err != nil {
		return exitUsage, err
	}
	return exitOK, nil
}
