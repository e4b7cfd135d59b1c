package main

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestMaxRateFlag: --max-rate reaches the engine's Config, a shard takes
// its part of it, and the result's settings record the whole run's cap.
func TestMaxRateFlag(t *testing.T) {
	for _, tt := range []struct {
		args         []string
		cfg, setting float64
	}{
		{[]string{"--concurrency", "8", "--max-rate", "50"}, 50, 50},
		{[]string{"--concurrency", "8", "--max-rate", "50", "--shard", "1/2"}, 25, 50},
		{[]string{"--concurrency", "8"}, 0, 0},
	} {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		var f runFlags
		f.register(fs)
		if err := fs.Parse(append([]string{"--method", "echo"}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		c, err := f.config(fs, deadTCP)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		got, _ := settings(c)["max_rate"].(float64)
		if c.MaxRate != tt.cfg || got != tt.setting {
			t.Errorf("%q: MaxRate %g, settings max_rate %g; want %g and %g", tt.args, c.MaxRate, got, tt.cfg, tt.setting)
		}
	}
}
