package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
)

// childModeEnv makes the test binary serve JSON-RPC on its stdin/stdout, so
// stdio runs have a real child process to talk to.
const childModeEnv = "RPCLOAD_ENGINE_TEST_CHILD"

func init() {
	mode := os.Getenv(childModeEnv)
	if mode == "" {
		return
	}
	f := testsrv.FramingNewline
	if mode == "content-length" {
		f = testsrv.FramingContentLength
	}
	srv, err := testsrv.New(testsrv.Config{})
	if err == nil {
		err = srv.ServeStdio(os.Stdin, os.Stdout, f)
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// allTargets starts the reference server on every listener it has and
// returns a target per transport rpcload speaks.
func allTargets(t *testing.T, cfg testsrv.Config) (*testsrv.Server, map[string]transport.Target) {
	t.Helper()
	srv, err := testsrv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	a, err := srv.Listen(ctx, testsrv.Addrs{
		HTTP: "127.0.0.1:0", TCP: "127.0.0.1:0", TCPLSP: "127.0.0.1:0",
		Unix: filepath.Join(dir, "nl.sock"), UnixLSP: filepath.Join(dir, "cl.sock"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	targets := map[string]transport.Target{}
	for name, url := range map[string]string{
		"http": "http://" + a.HTTP + "/", "ws": "ws://" + a.HTTP + "/ws", "tcp": "tcp://" + a.TCP,
		"tcp+lsp": "tcp+lsp://" + a.TCPLSP, "unix": "unix://" + a.Unix, "unix+lsp": "unix+lsp://" + a.UnixLSP,
	} {
		targets[name] = target(t, url)
	}
	return srv, targets
}

// TestEveryTransportRunsClean runs the same short load over every
// transport: a correct server shows no violation anywhere, with and without
// batches.
func TestEveryTransportRunsClean(t *testing.T) {
	_, targets := allTargets(t, testsrv.Config{})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range []transport.Framing{transport.Newline, transport.ContentLength} {
		tg, err := transport.CommandTarget([]string{exe}, fr)
		if err != nil {
			t.Fatal(err)
		}
		targets["stdio/"+fr.String()] = tg
	}
	type variant struct {
		name  string
		batch int
		http2 bool
	}
	for name, tg := range targets {
		variants := []variant{{"single", 0, false}, {"batch", 5, false}}
		if name == "http" {
			variants = append(variants, variant{"http2", 0, true}, variant{"http2-batch", 5, true})
		}
		for _, v := range variants {
			t.Run(name+"/"+v.name, func(t *testing.T) {
				cfg := baseConfig(tg)
				cfg.Batch, cfg.HTTP2, cfg.NotifyEvery = v.batch, v.http2, 9
				// A loaded CI machine (and a race-enabled child) can be slow;
				// this test is about correctness, not latency.
				cfg.Timeout, cfg.Drain = 5*time.Second, 5*time.Second
				if v.http2 {
					// net/http's HTTP/2 is far slower under the race
					// detector; keep the load well below what it can do.
					cfg.Rate = 1000
				}
				messages := uint64(cfg.Rate * cfg.Duration.Seconds())
				if tg.Scheme == transport.Stdio {
					cfg.Conns = 1
					mode := "newline"
					if tg.Framing == transport.ContentLength {
						mode = "content-length"
					}
					cfg.Child.Env = []string{childModeEnv + "=" + mode}
				}
				res, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				q := res.Requests
				if len(res.Violations) != 0 || q.OK != q.Sent || q.Sent == 0 || q.TransportErrors+q.Timeouts+q.Leaked != 0 {
					t.Fatalf("requests %+v violations %v samples %v errors %v", q, res.Violations, res.ViolationSamples, res.TransportErrorSamples)
				}
				// --rate counts messages, each a batch or a single call.
				if q.Messages != messages || q.Sent+q.Notifications != messages*uint64(max(v.batch, 1)) {
					t.Errorf("messages %d, elements %d; want %d messages of %d", q.Messages, q.Sent+q.Notifications, messages, max(v.batch, 1))
				}
				if tg.Scheme == transport.Stdio && (res.Child == nil || len(res.Child.Exits) != 1) {
					t.Errorf("child report %+v, want one exit (at the end of the run)", res.Child)
				}
			})
		}
	}
}

// TestFaultsOverEveryTransport: a duplicated reply is caught with the exact
// count on every transport, batches included.
func TestFaultsOverEveryTransport(t *testing.T) {
	for _, name := range []string{"ws", "tcp+lsp", "unix", "unix+lsp"} {
		t.Run(name, func(t *testing.T) {
			srv, targets := allTargets(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultDuplicate, Prob: 0.05}}, Seed: 5})
			res, err := Run(context.Background(), baseConfig(targets[name]))
			if err != nil {
				t.Fatal(err)
			}
			n := srv.Injected()[testsrv.FaultDuplicate]
			if n == 0 || res.Violations["duplicate_reply"] != n || len(res.Violations) != 1 {
				t.Fatalf("violations %v, want duplicate_reply=%d only", res.Violations, n)
			}
		})
	}
}

// TestConnectionsOpened: every transport counts the connections it opened
// for the load: the streams one per --conns slot, HTTP/1.1 each worker's
// keep-alive connection (dialled on first use, so at most --conns), HTTP/2
// and MCP's Streamable HTTP the TCP connections net/http opened, which
// only net/http decides (max 0: at most one per message sent, plus the
// handshake's).
func TestConnectionsOpened(t *testing.T) {
	_, targets := allTargets(t, testsrv.Config{})
	_, mcp := listenProfile(t, testsrv.Config{Profile: testsrv.ProfileMCP, MCPEra: testsrv.MCPModern}, testsrv.Addrs{HTTP: "127.0.0.1:0"})
	tests := []struct {
		name     string
		tg       transport.Target
		http2    bool
		mcp      bool
		min, max int64
	}{
		{"tcp", targets["tcp"], false, false, 3, 3},
		{"ws", targets["ws"], false, false, 3, 3},
		{"http", targets["http"], false, false, 1, 3},
		{"http2", targets["http"], true, false, 1, 0},
		{"mcp over http", target(t, "http://"+mcp.HTTP+testsrv.MCPPath), false, true, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(tc.tg)
			cfg.Conns, cfg.HTTP2, cfg.Rate, cfg.Timeout = 3, tc.http2, 1000, 2*time.Second
			if tc.mcp {
				cfg.Profile = mcpProfile(t, "modern")
				cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"echo","arguments":{}}`)
				cfg.Rate = 500
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			most := tc.max
			if most == 0 {
				most = int64(res.Requests.Messages) + 2
			}
			if c := res.Connections; c.Opened < tc.min || c.Opened > most || c.Lost != 0 {
				t.Errorf("connections %+v, want between %d and %d opened, none lost", c, tc.min, most)
			}
			if res.Requests.Sent == 0 {
				t.Errorf("requests %+v: none sent", res.Requests)
			}
		})
	}
}
