package engine

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
)

// DryRun writes the first n messages the run described by cfg would send,
// one per line, exactly as encoded (ids as one connection would number
// them), without connecting to anything: for checking templates. An MCP
// run whose era would be detected is shown in the modern era.
func DryRun(cfg Config, n int, w io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	names := make([]string, len(cfg.Calls))
	for i, c := range cfg.Calls {
		names[i] = c.Name
	}
	now := time.Now()
	r := &run{cfg: &cfg, agg: stats.NewAggregator(names), prof: cfg.Profile, base: now, epoch: now,
		unmatched: uint16(len(cfg.Calls)), pickPCG: rand.NewPCG(0, 0)}
	r.pickRand = rand.New(r.pickPCG)
	r.era = r.prof.Era()
	if r.era == profile.EraAuto {
		r.era = profile.EraModern
	}
	if err := r.prepareCalls(); err != nil {
		return err
	}
	stopped := false
	r.endSending = func() { stopped = true }
	tb := pending.NewAt(n*r.cfg.MaxWeight(), r.cfg.Shard.IDBase())
	rec := r.agg.NewRecorder()
	g := r.newParamGen()
	var cc connCounters
	var o outgoing
	var msg []byte
	var ids []uint64
	for k := uint64(1); k <= uint64(n) && !stopped; k++ {
		seq := cfg.Shard.Seq(k)
		t := tick{seq: seq, call: r.cfg.Pick(r.pickPCG, r.pickRand, seq)}
		msg, ids, _ = r.encodeTick(&o, tb, rec, &cc, g, msg, ids[:0], t)
		if len(msg) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\n", msg); err != nil {
			return err
		}
	}
	if stopped {
		_, err := fmt.Fprintln(w, "# a call's data ran out: the run would stop sending here")
		return err
	}
	return nil
}
