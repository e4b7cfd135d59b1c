package engine

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/workload"
)

// fakeMCP is a scripted MCP server on newline-delimited TCP. It records
// what the client sent, by method, so the tests can check the handshake,
// the _meta of every call and the cancellations.
type fakeMCP struct {
	era      string // "modern", "legacy" or "silent" (a legacy server that ignores server/discover)
	slowCall bool   // never answer tools/call (to provoke timeouts)

	mu      sync.Mutex
	methods []string // in arrival order, "(reply)" for answers the client sent
	metaBad int      // tools/call requests without the modern _meta
	inited  bool
}

func (f *fakeMCP) handle(line []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if m.Method == "" {
		f.methods = append(f.methods, "(reply)")
		return nil
	}
	f.methods = append(f.methods, m.Method)
	reply := func(result string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + "}\n")
	}
	fail := func(code, msg string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":` + code + `,"message":"` + msg + `"}}` + "\n")
	}
	switch m.Method {
	case "server/discover":
		switch f.era {
		case "modern":
			return reply(`{"supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"fake","version":"1"},"resultType":"complete"}`)
		case "legacy":
			return fail("-32601", "method not found")
		}
		return nil
	case "initialize":
		f.inited = true
		return reply(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`)
	case "tools/call":
		if f.era == "modern" && (m.Params.Meta["io.modelcontextprotocol/protocolVersion"] == nil || m.Params.Meta["io.modelcontextprotocol/clientCapabilities"] == nil) {
			f.metaBad++
		}
		if f.era != "modern" && !f.inited {
			return fail("-32600", "not initialized")
		}
		if f.slowCall {
			return nil
		}
		// A legacy server pings its client now and then.
		ping := ""
		if f.era != "modern" {
			ping = `{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n"
		}
		return append([]byte(ping), reply(`{"content":[{"type":"text","text":"ok"}]}`)...)
	}
	return nil
}

func (f *fakeMCP) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.methods {
		if m == method {
			n++
		}
	}
	return n
}

func mcpProfile(t *testing.T, era string) profile.Profile {
	t.Helper()
	p, err := profile.New(profile.MCP, profile.Options{MCPEra: era})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMCPOverStream: the era is detected once (a server/discover probe; an
// error or silence means legacy), a legacy connection is initialized
// before any call, modern calls carry _meta, the server's pings are
// answered, and the profile section says what happened.
func TestMCPOverStream(t *testing.T) {
	tests := []struct {
		serverEra, clientEra string
		wantEra, wantVersion string
		wantProbes, wantInit int
	}{
		{"modern", "auto", "modern", "2026-07-28", 1, 0},
		{"legacy", "auto", "legacy", "2025-06-18", 1, 2},
		{"silent", "auto", "legacy", "2025-06-18", 1, 2},
		{"legacy", "legacy", "legacy", "2025-06-18", 0, 2},
		{"modern", "modern", "modern", "2026-07-28", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.serverEra+"/"+tc.clientEra, func(t *testing.T) {
			srv := &fakeMCP{era: tc.serverEra}
			cfg := baseConfig(target(t, lineServer(t, srv.handle)))
			cfg.Profile = mcpProfile(t, tc.clientEra)
			cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"echo","arguments":{}}`)
			cfg.Rate, cfg.Duration, cfg.Timeout, cfg.Drain = 1000, 100*time.Millisecond, 2*time.Second, 2*time.Second
			if tc.serverEra == "silent" {
				cfg.Timeout = 200 * time.Millisecond // the probe waits this long
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if q.Sent != 100 || q.OK != 100 || len(res.Violations) != 0 {
				t.Fatalf("requests %+v violations %v", q, res.Violations)
			}
			p := res.Profile
			if p == nil || p.Era != tc.wantEra || p.Version != tc.wantVersion || p.Handshakes != 2 {
				t.Fatalf("profile %+v, want era %s version %s and 2 handshakes", p, tc.wantEra, tc.wantVersion)
			}
			if n := srv.count("server/discover"); n != tc.wantProbes {
				t.Errorf("%d probes, want %d (the era is detected once per run)", n, tc.wantProbes)
			}
			if n := srv.count("initialize") + srv.count("notifications/initialized"); n != tc.wantInit*2 {
				t.Errorf("%d initialize + initialized, want %d over 2 connections", n, tc.wantInit*2)
			}
			if srv.metaBad != 0 {
				t.Errorf("%d modern calls without the required _meta", srv.metaBad)
			}
			if tc.wantEra == "legacy" && (p.ServerRequestsAnswered != 100 || res.ServerMethods["ping"] != 100) {
				t.Errorf("answered %d pings, counted %v; want 100", p.ServerRequestsAnswered, res.ServerMethods)
			}
		})
	}
}

// TestMCPTimeoutsAreCancelled: every request that times out on a stream is
// followed by notifications/cancelled naming its id.
func TestMCPTimeoutsAreCancelled(t *testing.T) {
	srv := &fakeMCP{era: "modern", slowCall: true}
	cfg := baseConfig(target(t, lineServer(t, srv.handle)))
	cfg.Profile = mcpProfile(t, "modern")
	cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"echo"}`)
	cfg.Rate, cfg.Duration, cfg.Timeout, cfg.Drain = 500, 100*time.Millisecond, 50*time.Millisecond, 500*time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests.Timeouts != 50 || res.Profile.CancelsSent != 50 {
		t.Fatalf("timeouts %d, cancels sent %d; want 50 and 50", res.Requests.Timeouts, res.Profile.CancelsSent)
	}
	if n := srv.count("notifications/cancelled"); n != 50 {
		t.Errorf("server got %d notifications/cancelled, want 50", n)
	}
}

// TestProfileRefusals: what a profile forbids is refused before any
// connection, with the flag named.
func TestProfileRefusals(t *testing.T) {
	eth, _ := profile.New(profile.Eth, profile.Options{})
	lsp, _ := profile.New(profile.LSP, profile.Options{})
	tests := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"mcp batch", func(c *Config) { c.Profile, c.Batch = mcpProfile(t, "auto"), 4 }, "--batch"},
		{"mcp batch in a mix", func(c *Config) {
			c.Profile = mcpProfile(t, "auto")
			c.Calls = []workload.Call{{Method: "ping"}, {Name: "many", Method: "ping", Batch: 3}}
		}, `call "many": batch: the mcp profile`},
		{"eth string ids", func(c *Config) { c.Profile, c.IDFormat = eth, 1 }, "--id-format"},
		{"lsp over http", func(c *Config) { c.Profile, c.Target = lsp, target(t, "http://127.0.0.1:1/") }, "stream target"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, "tcp://127.0.0.1:1"))
			tc.edit(&cfg)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
