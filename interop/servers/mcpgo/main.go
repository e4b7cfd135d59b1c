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
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("-http %q: want a loopback address such as 127.0.0.1:0", addr)
	}
	lst, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(lst); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	fmt.Printf("http://%s/mcp\n", lst.Addr())
	waitForEnd()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx) // streams still open are cut when ctx ends
}

// waitForEnd returns when stdin reaches EOF (the parent went away or closed
// the pipe) or on SIGTERM/SIGINT.
func waitForEnd() {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		done <- struct{}{}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		done <- struct{}{}
	}()
	<-done
}
