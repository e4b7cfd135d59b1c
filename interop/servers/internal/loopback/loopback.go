// Package loopback serves the interop MCP servers' Streamable HTTP handler
// on a loopback address for as long as the parent (the test) wants it.
package loopback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// ServeMCP serves h on /mcp at addr, which must be a loopback address
// (port 0 picks a free one), prints the endpoint's URL on stdout once it
// listens, and returns when stdin reaches EOF or on SIGTERM/SIGINT, after
// a bounded graceful shutdown.
func ServeMCP(addr string, h http.Handler) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("-http %q: want a loopback address such as 127.0.0.1:0", addr)
	}
	lst, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(lst); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	fmt.Printf("http://%s/mcp\n", lst.Addr())
	WaitForEnd()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx) // streams still open are cut when ctx ends
}

// WaitForEnd returns when stdin reaches EOF (the parent went away or closed
// the pipe) or on SIGTERM/SIGINT.
func WaitForEnd() {
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
