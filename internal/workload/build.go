package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload/scenario"
)

// Flags are the command line's values of a plan's settings, their defaults
// included. Set reports whether the user gave the flag of that name;
// only those override the scenario file.
type Flags struct {
	Rate        float64
	Concurrency int
	MaxRate     float64
	Duration    time.Duration
	Timeout     time.Duration
	Drain       time.Duration // unless set: the scenario's, else Timeout
	MaxInFlight int
	Method      string
	Params      string // JSON, or ""
	IDFormat    string // "int" or "string"
	NotifyEvery int
	Batch       int
	Requests    uint64 // 0: no count ends the run
	Seed        uint64 // unless set: the scenario's, else random
	Arrival     string // "uniform", "poisson", or "" (uniform)
	Shard       string // "i/n", or ""
	StartAt     string // RFC 3339, or ""
	Set         func(flag string) bool
}

// defaultRate is the open-loop rate of a run given neither a rate nor a
// concurrency.
const defaultRate = 1000

// Build makes the plan of a run in one pass: the scenario file sc (nil for
// none) first, the flags the user set laid over it, the flags' defaults
// for what neither gives; then validates it. stream tells whether the
// target is a stream. An error names the setting as the user wrote it: its
// flag (--duration), or its key in the file with the file and line
// (load.duration (run.yaml:4)).
func Build(sc *scenario.Scenario, f Flags, stream bool) (Plan, error) {
	b := builder{sc: sc, f: f, p: Plan{names: map[string]string{}}}
	if err := b.lay(); err != nil {
		return Plan{}, err
	}
	if err := b.p.Validate(stream); err != nil {
		return Plan{}, err
	}
	return b.p, nil
}

type builder struct {
	sc *scenario.Scenario
	f  Flags
	p  Plan
}

// fromFile reports whether the file gives setting key (flag name) under
// fileKey and the command line does not; the plan then names it by its key.
func (b *builder) fromFile(key, fileKey string) bool {
	name, ok := fileName(b.sc, b.f.Set, key, fileKey)
	if ok {
		b.p.names[key] = name
	}
	return ok
}

// lay lays the file and the flags into the plan.
func (b *builder) lay() error {
	for flag, key := range fileKeys {
		b.fromFile(flag, key)
	}
	f, p := &b.f, &b.p
	*p = Plan{Rate: f.Rate, Concurrency: f.Concurrency, MaxRate: f.MaxRate, Duration: f.Duration, Timeout: f.Timeout, MaxInFlight: f.MaxInFlight,
		Method: f.Method, NotifyEvery: f.NotifyEvery, Batch: f.Batch, Requests: f.Requests, Seed: f.Seed, names: p.names}
	if f.Params != "" {
		p.Params = []byte(f.Params)
	}
	if err := b.layLoad(); err != nil {
		return err
	}
	switch f.IDFormat {
	case "int":
		p.IDFormat = wire.IDInt
	case "string":
		p.IDFormat = wire.IDQuoted
	default:
		return fmt.Errorf("--id-format must be int or string (got %q)", f.IDFormat)
	}
	var err error
	if p.Shard, err = parseShard(f.Shard); err != nil {
		return fmt.Errorf("--shard: %w", err)
	}
	if f.StartAt != "" {
		if p.StartAt, err = time.Parse(time.RFC3339, f.StartAt); err != nil {
			return fmt.Errorf("--start-at: %q is not an RFC 3339 time like 2026-12-02T15:04:05Z", f.StartAt)
		}
	}
	if b.sc != nil {
		p.Method, p.Params = "", nil
		p.Calls = calls(b.sc.Mix)
	}
	return nil
}

// layLoad lays the load section and the seed.
func (b *builder) layLoad() error {
	f, p := &b.f, &b.p
	var l scenario.LoadShape
	if b.sc != nil {
		l = b.sc.Load
	}
	steady := f.Set(keyRate) || f.Set(keyConcurrency)
	if b.sc != nil && !steady {
		b.fromFile(keyRate, "load.rate")
		b.fromFile(keyConcurrency, "load.concurrency")
		p.Rate, p.Concurrency = l.Rate, l.Concurrency
		if len(l.Stages) > 0 {
			p.StartRate, p.StartConcurrency = l.StartRate, l.StartConcurrency
			for _, st := range l.Stages {
				p.Stages = append(p.Stages, Stage{Duration: st.Duration, Rate: st.Rate, Concurrency: st.Concurrency})
			}
			if f.Set(keyDuration) {
				if err := b.cutStages(); err != nil {
					return err
				}
			}
		}
	}
	if p.Rate == 0 && p.Concurrency == 0 && !f.Set(keyRate) && len(p.Stages) == 0 {
		p.Rate = defaultRate
	}
	if b.fromFile(keyDuration, "load.duration") {
		p.Duration = l.Duration
	} else if f.Requests > 0 && !f.Set(keyDuration) && len(p.Stages) == 0 {
		p.Duration = OpenEnded // the count ends the run, however long it takes
	}
	if b.fromFile(keyTimeout, "load.timeout") {
		p.Timeout = l.Timeout
	}
	if b.fromFile(keyMaxInFlight, "load.max_inflight") {
		p.MaxInFlight = l.MaxInFlight
	}
	switch {
	case f.Set(keyDrain):
		p.Drain = f.Drain
	case b.fromFile(keyDrain, "load.drain"):
		p.Drain = *l.Drain
	default:
		p.Drain = p.Timeout
	}
	if b.fromFile(keySeed, "seed") {
		p.Seed = *b.sc.Seed
	} else if !f.Set(keySeed) {
		p.Seed = rand.Uint64() // a fresh run; the result records it for a replay
	}
	arrival := f.Arrival
	if b.fromFile(keyArrival, "load.arrival") {
		arrival = l.Arrival
	}
	switch arrival {
	case "uniform", "":
	case "poisson":
		p.Poisson = true
	default:
		return fmt.Errorf("%s must be uniform or poisson (got %q)", p.Name(keyArrival), arrival)
	}
	return nil
}

// cutStages ends the file's stages at --duration: the load follows them
// as far as that and stops there (a stage it falls in ends at the value it
// had reached). A --duration past their end is refused: lengthening the
// stages would make up a load the file does not describe.
func (b *builder) cutStages() error {
	d, p := b.f.Duration, &b.p
	if d <= 0 {
		return fmt.Errorf("--duration must be positive (got %s)", d)
	}
	if !p.cutStages(d) {
		var total time.Duration
		for _, st := range p.Stages {
			total += st.Duration
		}
		name, _ := fileName(b.sc, nil, "stages", "load.stages")
		return fmt.Errorf("--duration %s is longer than the %s of %s: --duration cuts stages short and cannot lengthen them (give --rate or --concurrency to replace the stages with a steady load)",
			d, total, name)
	}
	return nil
}

// calls turns a scenario's mix into the plan's calls.
func calls(mix []scenario.Call) []Call {
	out := make([]Call, 0, len(mix))
	for _, c := range mix {
		wc := Call{Name: c.Name, Method: c.Method, Notify: c.Notify, Batch: c.Batch,
			Timeout: c.Timeout, Weight: c.Weight, IDReuse: c.IDReuse}
		if c.Params != nil {
			wc.Params = c.Params
		}
		wc.Raw = c.Raw
		if m := c.Mutate; m != nil {
			wc.Mutate = &Mutation{Fraction: m.Fraction, Ops: m.Ops}
		}
		e := c.Expect
		wc.Expect = Expect{ResultEqualsParams: e.ResultEqualsParams, ErrorCode: e.ErrorCode, ResultEquals: e.ResultEquals}
		if e.Result != nil {
			wc.Expect.Result = e.Result
		}
		out = append(out, wc)
	}
	return out
}

// parseShard reads "i/n"; "" is no shard.
func parseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q is not i/n, e.g. 2/4", s)
	}
	if n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("%q: i must be between 1 and n", s)
	}
	return Shard{Index: i, Count: n}, nil
}
