package engine

import (
	"io"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/workload"
)

// DryRun writes the first n messages the run described by cfg would send
// (workload.DryRun), encoded exactly as the run encodes them, without
// connecting to anything. An MCP run whose era would be detected is shown
// in the modern era.
func DryRun(cfg Config, n int, w io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	r := newRun(&cfg)
	now := time.Now()
	r.base, r.epoch = now, now
	if r.era == profile.EraAuto {
		r.era = profile.EraModern
	}
	if err := r.prepareCalls(); err != nil {
		return err
	}
	e := &dryEncoder{r: r, tb: pending.NewAt(n*cfg.MaxWeight(), cfg.Shard.IDBase()), rec: r.agg.NewRecorder(), g: r.newParamGen()}
	r.endSending = func() { e.stopped = true }
	return workload.DryRun(&cfg.Plan, n, e, w)
}

// dryEncoder encodes ticks through the run's own encoder, on one table.
type dryEncoder struct {
	r       *run
	tb      *pending.Table
	rec     *stats.Recorder
	g       *paramGen
	cc      connCounters
	o       outgoing
	msg     []byte
	ids     []uint64
	stopped bool // a call's data ran out
}

// Encode encodes the tick of call for sequence number seq.
func (e *dryEncoder) Encode(seq uint64, call uint16) ([]byte, bool) {
	e.msg, e.ids, _ = e.r.encodeTick(&e.o, e.tb, e.rec, &e.cc, e.g, nil, e.msg, e.ids[:0], tick{seq: seq, call: call})
	return e.msg, !e.stopped
}
