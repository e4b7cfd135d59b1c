package fuzz

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
)

// shuffledTarget starts the reference server answering every message after
// a random delay below shuffle (testsrv.Config.Shuffle), on the stream
// transport over: tcp, tcp+lsp, ws or stdio (this test binary as the
// child).
func shuffledTarget(t testing.TB, over string, shuffle time.Duration) (transport.Target, transport.ChildOptions) {
	t.Helper()
	if over == "stdio" {
		tg, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, transport.Newline)
		if err != nil {
			t.Fatal(err)
		}
		return tg, transport.ChildOptions{Env: []string{childEnv + "=shuffle=" + shuffle.String()}, Grace: time.Second}
	}
	srv, err := testsrv.New(testsrv.Config{Shuffle: shuffle})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := map[string]testsrv.Addrs{"tcp": {TCP: "127.0.0.1:0"}, "tcp+lsp": {TCPLSP: "127.0.0.1:0"}, "ws": {HTTP: "127.0.0.1:0"}}[over]
	bound, err := srv.Listen(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	url := map[string]string{"tcp": "tcp://" + bound.TCP, "tcp+lsp": "tcp+lsp://" + bound.TCPLSP, "ws": "ws://" + bound.HTTP + "/ws"}[over]
	tg, err := transport.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return tg, transport.ChildOptions{}
}

// outOfOrderExecs is how many inputs TestOutOfOrderServer sends per
// transport: RPCFUZZ_OUT_OF_ORDER_EXECS, or 600 (the short version CI
// runs; scripts/out-of-order-hunt.sh is the long hunt).
func outOfOrderExecs(t *testing.T) uint64 {
	v := os.Getenv("RPCFUZZ_OUT_OF_ORDER_EXECS")
	if v == "" {
		return 600
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("RPCFUZZ_OUT_OF_ORDER_EXECS: %v", err)
	}
	return n
}

// TestOutOfOrderServer fuzzes a correct server that answers each message
// of an input in a random order (JSON-RPC allows any) on every stream
// transport, with eight workers: no failure finding may come of it. Warnings
// (conformant choices worth knowing) are allowed.
func TestOutOfOrderServer(t *testing.T) {
	execs := outOfOrderExecs(t)
	for _, over := range []string{"tcp", "tcp+lsp", "ws", "stdio"} {
		t.Run(over, func(t *testing.T) {
			tg, child := shuffledTarget(t, over, 5*time.Millisecond)
			out := t.TempDir()
			if d := os.Getenv("RPCFUZZ_OUT_OF_ORDER_OUT"); d != "" {
				// (A hunt keeps its findings there to be read.)
				var err error
				if out, err = os.MkdirTemp(d, over+"-"); err != nil {
					t.Fatal(err)
				}
			}
			cfg := Config{Target: tg, Child: child, Workers: 8, Execs: execs, Seed: 1, OutDir: out,
				Timeout: 2 * time.Second, MinimizeBudget: 20}
			s, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if s.Execs < execs {
				t.Errorf("sent %d inputs of %d", s.Execs, execs)
			}
			for _, f := range s.Findings {
				if f.Severity == "failure" {
					t.Errorf("finding %s (%s): %s; replay: %v", f.ID, f.Key, f.Note, f.Reproduce)
				}
			}
		})
	}
}
