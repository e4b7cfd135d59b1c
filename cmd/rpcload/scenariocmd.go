package main

import (
	"github.com/rpcload/rpcload/cmd/internal/cli"

	"context"
	"encoding/json"
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

// scenarioCmd is "rpcload scenario from-openrpc|from-mcp": it writes a
// scenario file from what a server says it offers.
func scenarioCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || (args[0] != "from-openrpc" && args[0] != "from-mcp") {
		return exitUsage, usagef("usage: rpcload scenario from-openrpc (FILE | --discover TARGET) | from-mcp (TARGET | -- COMMAND...)")
	}
	sub := args[0]
	fs := pflag.NewFlagSet("scenario "+sub, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	out := fs.StringP("output", "o", "", "write the scenario to this file (atomically) instead of stdout")
	target := fs.String("target", "", "the target the scenario names (default: the one discovered from, or the document's first server)")
	seed := fs.Uint64("seed", 1, "seed of the literal example values")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the server")
	disc := fs.Bool("discover", false, "from-openrpc: ask TARGET's rpc.discover for the document instead of reading a file")
	era := fs.String("mcp-era", "auto", "from-mcp: the MCP era to speak (auto detects it)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, cli.UsageError{Err: err}
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
	case sub == "from-openrpc" && !*disc:
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
	p, err := profile.New(profile.MCP, profile.Options{MCPEra: *era})
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
	if *era != "auto" {
		eraName = *era
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
	all := []json.RawMessage{} // [] rather than null when the server lists nothing
	var params []byte
	for range 20 {
		res, err := engine.CallOnce(ctx, cfg, method, params)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, fmt.Errorf("%s result: %w", method, err)
		}
		var items []json.RawMessage
		if raw := page[key]; raw != nil && json.Unmarshal(raw, &items) != nil { // absent or null: an empty list
			return nil, fmt.Errorf("%s result: %q is not a list", method, key)
		}
		all = append(all, items...)
		var cursor string
		if json.Unmarshal(page["nextCursor"], &cursor) != nil || cursor == "" {
			break
		}
		params, _ = json.Marshal(map[string]string{"cursor": cursor})
	}
	return json.Marshal(map[string]any{key: all})
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
