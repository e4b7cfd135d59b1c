// Command jrpc2tcp serves echo and add with github.com/creachadair/jrpc2
// over TCP for rpcload's interop fuzz tests: newline framing
// (channel.Line), one jrpc2 server per accepted connection (server.Loop),
// the default server options, and the methods of interop/jrpc2_test.go
// (echo returns its params as they came; add takes [a, b] and returns a+b).
//
// -addr is the loopback address to listen on (127.0.0.1:PORT; port 0 picks
// one). The address is printed on stdout once the server listens. It runs
// until a signal ends it (none is handled: SIGTERM ends it at once, with
// the connections it serves).
//
// A panic in jrpc2 is not recovered: it ends the process, as it would end
// a real server built this way, so that a fuzzer that started it sees the
// crash with its panic line on stderr and starts it again.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"
	"github.com/creachadair/jrpc2/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	flag.Parse()
	log.SetPrefix("jrpc2tcp: ")
	log.SetFlags(0)

	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("-addr %q: want a loopback address such as 127.0.0.1:0", *addr)
	}
	lst, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tcp://%s\n", lst.Addr())

	methods := handler.Map{
		"echo": handler.New(func(_ context.Context, req *jrpc2.Request) (json.RawMessage, error) {
			return json.RawMessage(req.ParamString()), nil
		}),
		"add": handler.New(func(_ context.Context, p [2]int) int { return p[0] + p[1] }),
	}
	err = server.Loop(context.Background(), server.NetAccepter(lst, channel.Line), server.Static(methods), nil)
	log.Fatalf("accept loop ended: %v", err)
}
