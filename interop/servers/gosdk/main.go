// Command gosdk is a minimal MCP server built on the official Go SDK,
// github.com/modelcontextprotocol/go-sdk, for rpcload's interop tests. It
// has two tools: echo (returns its arguments as JSON text content) and add
// ({a, b} -> the sum as text).
//
// Without flags it speaks MCP on stdin/stdout (newline-delimited JSON) and
// exits when stdin closes. With -http ADDR (a loopback address such as
// 127.0.0.1:0) it serves Streamable HTTP on http://ADDR/mcp with the SDK's
// default options (stateful sessions, SSE responses; -stateless and -json
// change those two), prints
// "http://HOST:PORT/mcp" on one line on stdout once it listens, and exits
// when stdin closes or on SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rpcload/rpcload/interop/servers/internal/loopback"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this loopback address (e.g. 127.0.0.1:0) instead of stdio")
	stateless := flag.Bool("stateless", false, "HTTP: StreamableHTTPOptions.Stateless (no sessions; serves 2026-07-28)")
	jsonResponse := flag.Bool("json", false, "HTTP: StreamableHTTPOptions.JSONResponse (application/json instead of text/event-stream)")
	flag.Parse()
	log.SetPrefix("gosdk: ")
	log.SetFlags(0)

	s := newServer()
	if *httpAddr == "" {
		// Run returns when stdin reaches EOF.
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil &&
			!errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	serveHTTP(s, *httpAddr, &mcp.StreamableHTTPOptions{Stateless: *stateless, JSONResponse: *jsonResponse})
}

// addArgs are the arguments of add.
type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "rpcload-interop-gosdk", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Returns its arguments as JSON text.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(args)}}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Returns a+b as text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			sum := strconv.FormatFloat(in.A+in.B, 'f', -1, 64)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sum}}}, nil, nil
		})
	return s
}

// serveHTTP serves s with opts on addr until stdin closes or a signal
// arrives.
func serveHTTP(s *mcp.Server, addr string, opts *mcp.StreamableHTTPOptions) {
	loopback.ServeMCP(addr, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
}
