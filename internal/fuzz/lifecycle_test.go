package fuzz

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
)

// TestLifecycleFuzzed: a server that crashes on a request before
// initialize (lifecycleChild: tools/call over MCP, a textDocument/ request
// over LSP) is found. An input that carries a handshake message of its own
// (a seed's initialize, or what seq_skip_handshake made of it: the
// request first, the handshake after the requests, twice, reordered or
// cut short) goes to a fresh connection without the profile's handshake,
// so the server meets the input's order; a connection the handshake
// opened never meets the bug. The run is the same every time (one worker,
// a fixed seed and clock): the finding, not the timing, is judged.
func TestLifecycleFuzzed(t *testing.T) {
	for _, tc := range []struct {
		prof    profile.Name
		framing transport.Framing
		method  string
	}{
		{profile.MCP, transport.Newline, "tools/call"},
		{profile.LSP, transport.ContentLength, "textDocument/"},
	} {
		t.Run(string(tc.prof), func(t *testing.T) {
			t.Parallel()
			tg, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, tc.framing)
			if err != nil {
				t.Fatal(err)
			}
			child := transport.ChildOptions{Env: []string{childEnv + "=lifecycle=" + string(tc.prof)}, Grace: time.Second}
			cfg := Config{Target: tg, Child: child, Profile: tc.prof, ProfileOptions: profile.Options{MCPEra: "legacy"},
				Workers: 1, Execs: 400, Duration: 3 * time.Minute, Seed: 1, OutDir: t.TempDir(),
				Timeout: time.Second, StopAfter: 1, MinimizeBudget: 200, MinimizeTime: 20 * time.Second, Now: fixedClock}
			if tc.prof == profile.LSP {
				cfg.ProfileOptions = profile.Options{}
			}
			s, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var found *Finding
			for i, f := range s.Findings {
				t.Logf("finding %s %s (%d execs): %s", f.ID, f.Key, f.ExecsToFind, f.Note)
				if f.Rule == "crash" && strings.Contains(f.Key, "planted lifecycle bug") {
					found = &s.Findings[i]
				}
			}
			if found == nil {
				t.Fatalf("after %d execs (%d restarts), no crash of the planted lifecycle bug", s.Execs, s.Restarts)
			}
			res, err := Replay(context.Background(), found.Dir, ReplayOptions{Child: child})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict() != "REPRODUCED (3/3)" {
				t.Errorf("replay: %s %q", res.Verdict(), res.Seen)
			}
			in, err := os.ReadFile(found.Dir + "/input.bin")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(in), tc.method) {
				t.Errorf("the minimized input has no %s: %q", tc.method, in)
			}
		})
	}
}
