package engine

import (
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

// TestValidateAgainAfterChange: a Config changed after it was validated
// (--diff's second target) is checked as it is, while its Plan is not
// validated twice (a shard's load divided once).
func TestValidateAgainAfterChange(t *testing.T) {
	tcp, err := transport.ParseTarget("tcp://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	web, err := transport.ParseTarget("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: tcp, Plan: workload.Plan{Rate: 100, Duration: 1e9, Timeout: 1e9, MaxInFlight: 10, Method: "x",
		Shard: workload.Shard{Index: 1, Count: 2}}, Conns: 1, MaxFrame: 1 << 20,
		Steps: []profile.Step{{Method: "initialized"}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil || cfg.Rate != 50 {
		t.Fatalf("validated twice: err %v, rate %g; want nil and the shard's 50 (divided once)", err, cfg.Rate)
	}
	other := cfg
	other.Target = web
	if err := other.Validate(); err == nil || !strings.Contains(err.Error(), "need a stream target") {
		t.Errorf("a second target without streams was not checked: err %v", err)
	}
}

// TestSteady: a shaped plan made steady loses its stages for good, keeps
// their length, and stays valid.
func TestSteady(t *testing.T) {
	tcp, _ := transport.ParseTarget("tcp://127.0.0.1:1")
	cfg := Config{Target: tcp, Plan: workload.Plan{Timeout: 1e9, MaxInFlight: 10, Method: "x",
		StartConcurrency: 1, Stages: []workload.Stage{{Duration: 2e9, Concurrency: 4}, {Duration: 3e9, Concurrency: 1}}},
		Conns: 1, MaxFrame: 1 << 20}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if !cfg.ClosedStages() {
		t.Fatal("stages of concurrency not seen as a closed loop")
	}
	cfg.Steady(1)
	if cfg.ClosedStages() || !cfg.OpenLoop() || cfg.Rate != 1 || cfg.Duration != 5e9 || len(cfg.Stages) != 0 {
		t.Errorf("after Steady(1): closed stages %v, open %v, rate %g, duration %s, stages %d; want false, true, 1, 5s, 0",
			cfg.ClosedStages(), cfg.OpenLoop(), cfg.Rate, cfg.Duration, len(cfg.Stages))
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("a steady plan no longer validates: %v", err)
	}
}
