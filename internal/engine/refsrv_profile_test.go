package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// listenProfile starts the reference server in a protocol mode on the
// listeners of a (host:port "127.0.0.1:0" where wanted) and returns it with
// the addresses it got.
func listenProfile(t *testing.T, cfg testsrv.Config, a testsrv.Addrs) (*testsrv.Server, testsrv.Addrs) {
	t.Helper()
	srv, err := testsrv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got, err := srv.Listen(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	return srv, got
}

// waitCtx bounds a wait on the server's counters.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// lspConfig is a short LSP run over tcp+lsp that opens one Go file and asks
// for its symbols.
func lspConfig(t *testing.T, addr string) Config {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.go")
	text := []byte("package a\n\nfunc One() {}\n\nfunc Two() {}\n")
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profile.New(profile.LSP, profile.Options{Workspace: dir, ProcessID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(target(t, "tcp+lsp://"+addr))
	cfg.Profile, cfg.Steps = p, []profile.Step{profile.DidOpen(file, text)}
	cfg.Method, cfg.Params = "textDocument/documentSymbol", []byte(`{"textDocument":{"uri":"`+profile.FileURI(file)+`"}}`)
	cfg.Rate, cfg.Conns, cfg.Duration, cfg.Timeout, cfg.Drain = 500, 2, 100*time.Millisecond, 2*time.Second, 2*time.Second
	return cfg
}

// TestLSPAgainstReferenceServer: every connection is initialized, opens the
// file, answers the server's requests as an editor would, and is shut down
// (shutdown, then exit) at the end; the server's own count agrees.
func TestLSPAgainstReferenceServer(t *testing.T) {
	srv, a := listenProfile(t, testsrv.Config{Profile: testsrv.ProfileLSP}, testsrv.Addrs{TCPLSP: "127.0.0.1:0"})
	res, err := Run(context.Background(), lspConfig(t, a.TCPLSP))
	if err != nil {
		t.Fatal(err)
	}
	q := res.Requests
	if q.Sent != 50 || q.OK != 50 || len(res.Violations) != 0 {
		t.Fatalf("requests %+v violations %v errors %v", q, res.Violations, res.TransportErrorSamples)
	}
	if res.Profile.Handshakes != 2 || res.Profile.ServerRequestsAnswered != 4 || res.ServerMethods["window/logMessage"] != 2 {
		t.Errorf("profile %+v server methods %v: want 2 handshakes, 4 answers, 2 log messages", res.Profile, res.ServerMethods)
	}
	if err := srv.WaitLSP(waitCtx(t), func(st testsrv.LSPStats) bool { return st.Exits == 2 }); err != nil {
		t.Fatalf("the server saw %+v: %v", srv.LSPStats(), err)
	}
	st := srv.LSPStats()
	checks := []struct {
		name      string
		got, want uint64
	}{
		{"initialize", st.Requests["initialize"], 2},
		{"initialized", st.Notifications["initialized"], 2},
		{"didOpen", st.Notifications["textDocument/didOpen"], 2},
		{"documentSymbol", st.Requests["textDocument/documentSymbol"], 50},
		{"workspace/configuration answered", st.ServerRequestAnswers["workspace/configuration"], 2},
		{"workDoneProgress/create answered", st.ServerRequestAnswers["window/workDoneProgress/create"], 2},
		{"answers that were errors", st.ServerRequestErrors, 0},
		{"shutdown", st.Shutdowns, 2},
		{"exit without shutdown", st.ExitsWithoutShutdown, 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("server counted %s %d times, want %d", c.name, c.got, c.want)
		}
	}
}

// TestLSPTimeoutsSendCancelRequest: each request that times out is
// cancelled with $/cancelRequest, which stops it on the server; its -32800
// answer then arrives late, which is no violation.
func TestLSPTimeoutsSendCancelRequest(t *testing.T) {
	srv, a := listenProfile(t, testsrv.Config{Profile: testsrv.ProfileLSP}, testsrv.Addrs{TCPLSP: "127.0.0.1:0"})
	cfg := lspConfig(t, a.TCPLSP)
	cfg.Method, cfg.Params, cfg.Steps = "sleep", []byte(`{"ms":5000}`), nil
	cfg.Rate, cfg.Timeout, cfg.Drain = 200, 100*time.Millisecond, time.Second
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Requests
	if q.Sent != 20 || q.Timeouts != 20 || res.Profile.CancelsSent != 20 || len(res.Violations) != 0 {
		t.Fatalf("requests %+v cancels %d violations %v: want 20 timeouts, each cancelled", q, res.Profile.CancelsSent, res.Violations)
	}
	if err := srv.WaitLSP(waitCtx(t), func(st testsrv.LSPStats) bool { return st.CancelledInFlight == 20 }); err != nil {
		t.Fatalf("the server saw %+v: %v", srv.LSPStats(), err)
	}
}

// TestMCPAgainstReferenceServer runs the mcp profile against the reference
// server in each of its eras, over a stream and over Streamable HTTP, with
// the server sending its own messages: the era is detected, every call is
// answered, the server's pings are answered, and no POST lacks a header.
func TestMCPAgainstReferenceServer(t *testing.T) {
	tests := []struct {
		serverEra testsrv.MCPEra
		http      bool
		wantEra   string
	}{
		{testsrv.MCPDual, false, "modern"},
		{testsrv.MCPLegacy, false, "legacy"},
		{testsrv.MCPModern, false, "modern"},
		{testsrv.MCPDual, true, "modern"},
		{testsrv.MCPLegacy, true, "legacy"},
		{testsrv.MCPModern, true, "modern"},
	}
	for _, tc := range tests {
		name := string(tc.serverEra) + map[bool]string{true: "/http", false: "/tcp"}[tc.http]
		t.Run(name, func(t *testing.T) {
			srv, a := listenProfile(t, testsrv.Config{Profile: testsrv.ProfileMCP, MCPEra: tc.serverEra, ServerMessages: true},
				testsrv.Addrs{TCP: "127.0.0.1:0", HTTP: "127.0.0.1:0"})
			url := "tcp://" + a.TCP
			if tc.http {
				url = "http://" + a.HTTP + testsrv.MCPPath
			}
			cfg := baseConfig(target(t, url))
			cfg.Profile = mcpProfile(t, "auto")
			cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"echo","arguments":{"x":1}}`)
			cfg.Rate, cfg.Conns, cfg.Duration, cfg.Timeout, cfg.Drain = 500, 2, 100*time.Millisecond, 2*time.Second, 2*time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if q.Sent != 50 || q.OK != 50 || len(res.Violations) != 0 {
				t.Fatalf("requests %+v violations %v errors %v", q, res.Violations, res.TransportErrorSamples)
			}
			if res.Profile.Era != tc.wantEra {
				t.Errorf("era %s, want %s", res.Profile.Era, tc.wantEra)
			}
			st := srv.MCPStats()
			if st.HeaderMismatches != 0 || st.UnknownReplies != 0 || st.ServerRequestErrors != 0 {
				t.Errorf("server saw %d header mismatches, %d unknown replies, %d error answers", st.HeaderMismatches, st.UnknownReplies, st.ServerRequestErrors)
			}
			if tc.wantEra == "legacy" && st.ServerRequests == 0 {
				t.Errorf("a legacy server with ServerMessages sent no request: nothing was tested")
			}
			if st.ServerRequestAnswers != st.ServerRequests || uint64(res.Profile.ServerRequestsAnswered) != st.ServerRequests {
				t.Errorf("server sent %d requests, got %d answers; rpcload answered %d", st.ServerRequests, st.ServerRequestAnswers, res.Profile.ServerRequestsAnswered)
			}
			if st.ServerNotifications > 0 && res.ServerMethods["notifications/message"] != st.ServerNotifications {
				t.Errorf("server sent %d notifications/message, rpcload counted %v", st.ServerNotifications, res.ServerMethods)
			}
		})
	}
}

// TestMCPCancellationReachesTheServer: over a stream, a timed-out tools/call
// is cancelled with notifications/cancelled, which stops it on the server.
func TestMCPCancellationReachesTheServer(t *testing.T) {
	srv, a := listenProfile(t, testsrv.Config{Profile: testsrv.ProfileMCP}, testsrv.Addrs{TCP: "127.0.0.1:0"})
	cfg := baseConfig(target(t, "tcp://"+a.TCP))
	cfg.Profile = mcpProfile(t, "auto")
	cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"sleep","arguments":{"ms":5000}}`)
	cfg.Rate, cfg.Conns, cfg.Duration, cfg.Timeout, cfg.Drain = 200, 1, 100*time.Millisecond, 100*time.Millisecond, time.Second
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q := res.Requests; q.Sent != 20 || q.Timeouts != 20 || res.Profile.CancelsSent != 20 {
		t.Fatalf("requests %+v cancels %d: want 20 timeouts, each cancelled", q, res.Profile.CancelsSent)
	}
	if err := srv.WaitMCP(waitCtx(t), func(st testsrv.MCPStats) bool { return st.CancelledInFlight == 20 }); err != nil {
		t.Fatalf("the server saw %+v: %v", srv.MCPStats(), err)
	}
}

// TestMCPToolMustExist: with a tool named, the server's tools/list is read
// first (over a stream and over HTTP, in both eras); a tool it does not
// offer stops the run before any load, naming the tools it does offer.
func TestMCPToolMustExist(t *testing.T) {
	for _, era := range []testsrv.MCPEra{testsrv.MCPModern, testsrv.MCPLegacy} {
		_, a := listenProfile(t, testsrv.Config{Profile: testsrv.ProfileMCP, MCPEra: era}, testsrv.Addrs{TCP: "127.0.0.1:0", HTTP: "127.0.0.1:0"})
		for _, url := range []string{"tcp://" + a.TCP, "http://" + a.HTTP + testsrv.MCPPath} {
			for _, tool := range []string{"echo", "nope"} {
				t.Run(string(era)+"/"+url[:4]+"/"+tool, func(t *testing.T) {
					cfg := baseConfig(target(t, url))
					cfg.Profile, cfg.Tool = mcpProfile(t, "auto"), tool
					cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"`+tool+`","arguments":{}}`)
					cfg.Rate, cfg.Duration, cfg.Timeout = 200, 50*time.Millisecond, 2*time.Second
					res, err := Run(context.Background(), cfg)
					if tool == "nope" {
						if !errors.Is(err, ErrNoSuchTool) || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "echo") {
							t.Fatalf("Run = %v, want ErrNoSuchTool naming nope and listing echo", err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(res.Profile.Tools, "echo") || res.Requests.OK != res.Requests.Sent {
						t.Errorf("tools %v, requests %+v", res.Profile.Tools, res.Requests)
					}
				})
			}
		}
	}
}
