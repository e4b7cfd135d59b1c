// Command mcpgo is a minimal MCP server built on github.com/mark3labs/mcp-go
// for rpcload's interop tests. It has two tools: echo (returns its
// arguments as JSON text content) and add ({a, b} -> the sum as text).
//
// Without flags it speaks MCP on stdin/stdout (newline-delimited JSON) and
// exits when stdin closes. With -http ADDR (a loopback address such as
// 127.0.0.1:0) it serves Streamable HTTP on http://ADDR/mcp with the
// library's default options, prints "http://HOST:PORT/mcp" on one line on
// stdout once it listens, and exits when stdin closes or on SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"os"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rpcload/rpcload/interop/servers/internal/loopback"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this loopback address (e.g. 127.0.0.1:0) instead of stdio")
	flag.Parse()
	log.SetPrefix("mcpgo: ")
	log.SetFlags(0)

	s := newServer()
	if *httpAddr == "" {
		// ServeStdio returns when stdin reaches EOF (or on SIGTERM/SIGINT).
		if err := server.ServeStdio(s, server.WithErrorLogger(log.New(os.Stderr, "mcpgo: ", 0))); err != nil &&
			!errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	serveHTTP(s, *httpAddr)
}

func newServer() *server.MCPServer {
	s := server.NewMCPServer("rpcload-interop-mcpgo", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns its arguments as JSON text.")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.RawArguments
			if len(args) == 0 {
				b, err := json.Marshal(req.Params.Arguments)
				if err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				args = b
			}
			return mcp.NewToolResultText(string(args)), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Returns a+b as text."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := req.RequireFloat("a")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			b, err := req.RequireFloat("b")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(strconv.FormatFloat(a+b, 'f', -1, 64)), nil
		})
	return s
}

// serveHTTP serves s with the default Streamable HTTP options on addr until
// stdin closes or a signal arrives.
func serveHTTP(s *server.MCPServer, addr string) {
	loopback.ServeMCP(addr, server.NewStreamableHTTPServer(s))
}
