package scenario

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Bounds of the load section.
const (
	maxStages = 1000
	maxConc   = 1 << 24
	maxRate   = 10_000_000 // calls per second, as the engine supports
)

var (
	loadKeys  = []string{"rate", "concurrency", "duration", "stages", "start_rate", "start_concurrency", "arrival", "timeout", "drain", "max_inflight"}
	stageKeys = []string{"duration", "rate", "concurrency"}
)

// load reads the load section and notes the line of each key in lines.
func (p *parser) load(n *yaml.Node, lines map[string]int) LoadShape {
	var l LoadShape
	f := p.fields(n, "load", loadKeys...)
	if f == nil {
		return l
	}
	for k, v := range f {
		lines["load."+k] = v.key.Line
	}
	if v, ok := f["rate"]; ok {
		l.Rate, _ = p.rate(v.val, "load.rate", false)
	}
	if v, ok := f["concurrency"]; ok {
		l.Concurrency, _ = p.intIn(v.val, "load.concurrency", 1, maxConc)
		if r, both := f["rate"]; both {
			p.errorf(v.key, "load.concurrency: rate (open loop, line %d) and concurrency (closed loop) exclude each other", r.key.Line)
		}
	}
	if v, ok := f["duration"]; ok {
		l.Duration, _ = p.duration(v.val, "load.duration", false)
	}
	if v, ok := f["timeout"]; ok {
		l.Timeout, _ = p.duration(v.val, "load.timeout", false)
	}
	if v, ok := f["drain"]; ok {
		if d, ok := p.duration(v.val, "load.drain", true); ok {
			l.Drain = &d
		}
	}
	if v, ok := f["max_inflight"]; ok {
		l.MaxInFlight, _ = p.intIn(v.val, "load.max_inflight", 1, math.MaxInt32)
	}
	if v, ok := f["stages"]; ok {
		for _, other := range []string{"rate", "concurrency", "duration"} {
			if o, both := f[other]; both {
				p.errorf(o.key, "load.%s: stages set the %s themselves; remove %s or stages (line %d)", other, stageWhat(other), other, v.key.Line)
			}
		}
		l.Stages, l.StageKind = p.stages(v.val)
	}
	_, hasConc := f["concurrency"]
	closed := hasConc || l.StageKind == "concurrency"
	if v, ok := f["start_rate"]; ok {
		l.StartRate, _ = p.rate(v.val, "load.start_rate", true)
		if _, st := f["stages"]; !st || closed {
			p.errorf(v.key, "load.start_rate: applies to rate stages only (the rate the first ramp starts from)")
		}
	}
	if v, ok := f["start_concurrency"]; ok {
		l.StartConcurrency, _ = p.intIn(v.val, "load.start_concurrency", 0, maxConc)
		if _, st := f["stages"]; !st || l.StageKind == "rate" {
			p.errorf(v.key, "load.start_concurrency: applies to concurrency stages only (the concurrency the first ramp starts from)")
		}
	}
	if v, ok := f["arrival"]; ok {
		l.Arrival, _ = p.oneOf(v.val, "load.arrival", "uniform", "poisson")
		if closed {
			p.errorf(v.key, "load.arrival: applies to open loop (rate) only; in closed loop a call is sent when one completes")
		}
	}
	return l
}

// stageWhat says what stages set instead of key.
func stageWhat(key string) string {
	if key == "duration" {
		return "length of the run (the sum of their durations)"
	}
	return key + " over time"
}

// stages reads the stages list: every stage has a duration and either a
// rate or a concurrency, the same one in all stages. It returns the stages
// and their kind, "rate" or "concurrency".
func (p *parser) stages(n *yaml.Node) ([]Stage, string) {
	items, ok := p.list(n, "load.stages")
	if !ok {
		return nil, ""
	}
	if len(items) == 0 {
		p.errorf(n, "load.stages: expected at least one stage {duration, rate} or {duration, concurrency}")
		return nil, ""
	}
	if len(items) > maxStages {
		p.errorf(n, "load.stages: %d stages; at most %d", len(items), maxStages)
		return nil, ""
	}
	errs := len(p.errs)
	out := make([]Stage, 0, len(items))
	kindOf, kindLine := "", 0 // "rate" or "concurrency", as set by the first stage having one
	anyLoad := false
	for i, it := range items {
		where := "load.stages[" + strconv.Itoa(i) + "]"
		f := p.fields(it, where, stageKeys...)
		if f == nil {
			continue
		}
		var st Stage
		if v, ok := f["duration"]; ok {
			st.Duration, _ = p.duration(v.val, where+".duration", false)
		} else {
			p.errorf(it, "%s: missing duration", where)
		}
		rv, hasRate := f["rate"]
		cv, hasConc := f["concurrency"]
		switch {
		case hasRate && hasConc:
			p.errorf(cv.key, "%s: a stage has a rate or a concurrency, not both", where)
			continue
		case !hasRate && !hasConc:
			p.errorf(it, "%s: missing rate or concurrency (the target this stage ramps to)", where)
			continue
		}
		this, node := "rate", rv.key
		if hasConc {
			this, node = "concurrency", cv.key
		}
		if kindOf == "" {
			kindOf, kindLine = this, node.Line
		} else if this != kindOf {
			p.errorf(node, "%s: stages mix rate and concurrency (stage at line %d has %s); use one kind in all stages", where, kindLine, kindOf)
			continue
		}
		if hasRate {
			st.Rate, _ = p.rate(rv.val, where+".rate", true)
			anyLoad = anyLoad || st.Rate > 0
		} else {
			st.Concurrency, _ = p.intIn(cv.val, where+".concurrency", 0, maxConc)
			anyLoad = anyLoad || st.Concurrency > 0
		}
		out = append(out, st)
	}
	if kindOf != "" && !anyLoad && len(p.errs) == errs {
		p.errorf(n, "load.stages: every stage's %s is 0, so nothing would be sent", kindOf)
	}
	return out, kindOf
}

// rate reads a rate: a number > 0 (or >= 0 with zeroOK) up to maxRate.
func (p *parser) rate(n *yaml.Node, where string, zeroOK bool) (float64, bool) {
	r, ok := p.positive(n, where, zeroOK)
	if ok && r > maxRate {
		p.errorf(n, "%s: %v is above the supported %d calls per second", where, r, maxRate)
		return 0, false
	}
	return r, ok
}

// duration reads a Go duration such as "30s" or "1m30s": positive, or
// (zeroOK) at least 0.
func (p *parser) duration(n *yaml.Node, where string, zeroOK bool) (time.Duration, bool) {
	want := `a duration such as "30s" or "1m30s"`
	r, ok := p.scalar(n, where, want, "!!str")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(r.Value)
	switch {
	case err != nil:
		p.errorf(n, "%s: %q is not %s", where, clip(r.Value), want)
		return 0, false
	case d < 0 && zeroOK:
		p.errorf(n, "%s: %s must not be negative", where, r.Value)
		return 0, false
	case d <= 0 && !zeroOK:
		p.errorf(n, "%s: %s must be greater than 0", where, r.Value)
		return 0, false
	}
	return d, true
}

// maxSize is the largest size accepted: 1 TiB, or less where int is 32 bits.
const maxSize = min(1<<40, math.MaxInt)

// size reads a byte count: an integer, or a string with a KiB/MiB/GiB (or
// KB/MB/GB, or B) suffix, like the --max-frame flag.
func (p *parser) size(n *yaml.Node, where string) (int, bool) {
	want := `a size such as "16MiB", "512KiB" or 1000000`
	r, ok := p.scalar(n, where, want, "!!str", "!!int")
	if !ok {
		return 0, false
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, mult := strings.TrimSpace(r.Value), int64(1)
	if r.ShortTag() == "!!str" {
		for _, u := range units {
			if strings.HasSuffix(num, u.suffix) {
				num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
				break
			}
		}
	} else {
		var i int64
		if r.Decode(&i) != nil {
			num = "x"
		} else {
			num = strconv.FormatInt(i, 10)
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 {
		p.errorf(n, "%s: %q is not a positive size (expected %s)", where, clip(r.Value), want)
		return 0, false
	}
	if v > maxSize/mult {
		p.errorf(n, "%s: %s is too large (1 TiB at most)", where, clip(r.Value))
		return 0, false
	}
	return int(v * mult), true
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
