// Command geth serves go-ethereum's rpc.Server over HTTP for rpcload's
// soak test (interop/soak_test.go), with go-ethereum's own metrics: the
// services test (test_echo returns its arguments) and eth
// (eth_blockNumber counts up), and the process's figures as geth --metrics
// collects them (metrics.Enable, metrics.CollectProcessMetrics every
// second: system/cpu/goroutines, system/memory/used, …) in Prometheus text
// format on /debug/metrics/prometheus, geth's own path, through its
// metrics/prometheus handler.
//
// -addr is the loopback address to listen on (127.0.0.1:PORT; port 0 picks
// one). The server's URL is printed on stdout once it listens. It runs
// until a signal ends it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/metrics"
	"github.com/ethereum/go-ethereum/metrics/prometheus"
	"github.com/ethereum/go-ethereum/rpc"
)

// testService is registered as "test".
type testService struct{}

// Echo returns its positional arguments (up to three) as an array.
func (testService) Echo(a, b, c *json.RawMessage) []json.RawMessage {
	out := []json.RawMessage{}
	for _, p := range []*json.RawMessage{a, b, c} {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// ethService is registered as "eth".
type ethService struct{ block atomic.Uint64 }

// BlockNumber returns an increasing block number.
func (s *ethService) BlockNumber() hexutil.Uint64 { return hexutil.Uint64(s.block.Add(1)) }

// MetricsPath is where geth --metrics serves the Prometheus format.
const MetricsPath = "/debug/metrics/prometheus"

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	flag.Parse()
	log.SetPrefix("geth: ")
	log.SetFlags(0)
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("-addr %q: want a loopback address such as 127.0.0.1:0", *addr)
	}
	metrics.Enable() // before the rpc package records anything
	go metrics.CollectProcessMetrics(time.Second)

	srv := rpc.NewServer()
	if err := srv.RegisterName("test", testService{}); err != nil {
		log.Fatal(err)
	}
	if err := srv.RegisterName("eth", new(ethService)); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, prometheus.Handler(metrics.DefaultRegistry))
	mux.Handle("/", srv)
	lst, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s/\n", lst.Addr())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(hs.Serve(lst))
}
