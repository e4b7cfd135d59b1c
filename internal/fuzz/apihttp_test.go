package fuzz

import (
	"context"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
)

// TestDiscoverMCPOverHTTP: with --profile mcp over HTTP the era is never
// detected (rpcfuzz keeps no MCP session there), and the discovery's
// tools/list went through the profile's Params, which refuses an unknown
// era: every MCP run over HTTP stopped with "--discover: profile: the MCP
// era is not known yet" (the interop runs against mcp-go, the go-sdk and
// server-everything over Streamable HTTP). The lists are sent as every
// other input is, and the tools are found.
func TestDiscoverMCPOverHTTP(t *testing.T) {
	tg, _ := plantedTarget(t, 0, "http")
	cfg := Config{Target: tg, Profile: profile.MCP, Discover: true, Workers: 1, Execs: 20, Seed: 1, OutDir: t.TempDir(),
		Timeout: time.Second, SlowFloor: time.Hour, Now: fixedClock}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.API == nil || len(s.API.Methods) != 2 || s.API.Methods[0].Name != "tool search" || s.API.Methods[1].Name != "tool sum" {
		t.Fatalf("API coverage %+v, want the tools search and sum", s.API)
	}
}
