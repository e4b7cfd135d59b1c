package mutate

import (
	"fmt"
	"strings"
	"sync"
)

// MaxChain is the most ops one Mutate applies; the count itself, 1 to
// MaxChain, is a choice.
const MaxChain = 3

// maxTries bounds the picks spent on one slot of a chain when the ops picked
// do not apply to the input.
const maxTries = 8

const (
	// baseWeight is every op's starting weight; rewards multiply it.
	baseWeight = 1 << 10
	// maxWeightRatio bounds a rewarded op's weight at this many times the
	// smallest weight, so no op can starve the others.
	maxWeightRatio = 20
	// weightCeiling triggers halving every weight, keeping their ratios and
	// the total well inside an int.
	weightCeiling = 1 << 24
)

// Mutator applies chains of ops picked by weight. Its methods are safe for
// concurrent use; Mutate is deterministic for a given Chooser stream, input
// and weight history.
type Mutator struct {
	env  Env
	defs []opDef
	ops  []Op

	mu       sync.Mutex
	weight   []int // 0: the op can never apply under env
	start    []int // each op's starting weight (0 where weight is)
	total    int
	applied  []uint64
	rewarded []uint64
}

// OpStat is one op's record in a Mutator.
type OpStat struct {
	Name  string
	Class Class
	// Applied counts the Mutate chains the op took part in; Rewarded, the
	// Reward calls naming it.
	Applied, Rewarded uint64
	// Weight is the op's pick weight: 1.0 at the start, 0 for an op env
	// rules out. Only the ratios between ops mean anything: all weights are
	// halved together when they grow large.
	Weight float64
}

// New returns a Mutator for env (copied; nil is the zero Env). Ops that env
// rules out for good (framing ops of another framing, schema ops without
// schemas, splices without a corpus, ...) get weight 0.
func New(env *Env) *Mutator {
	m := &Mutator{defs: opTable, ops: Ops()}
	if env != nil {
		m.env = *env
	}
	m.weight = make([]int, len(m.defs))
	m.start = make([]int, len(m.defs))
	m.applied = make([]uint64, len(m.defs))
	m.rewarded = make([]uint64, len(m.defs))
	for i := range m.defs {
		if d := &m.defs[i]; d.eligible(&m.env) {
			m.start[i] = d.startWeight()
			m.weight[i] = m.start[i]
			m.total += m.weight[i]
		}
	}
	return m
}

// pick draws an op index by weight, or -1 when no op is eligible.
func (m *Mutator) pick(c Chooser) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.total == 0 {
		return -1
	}
	x := c.Intn(m.total)
	for i, w := range m.weight {
		if x < w {
			return i
		}
		x -= w
	}
	return -1
}

// Mutate applies a chain of 1..MaxChain ops to in and returns the result and
// the indices (into Ops()) of the ops applied, in order. A framing op, which
// writes Case.Wire from the frames, is applied last whenever it is picked,
// so the ops after it cannot discard its Wire; at most one is applied. When
// no picked op applies, the table is searched in order from a chosen op for
// one that does; when none does (no frames), in is returned with no ops. An
// op that makes the case bigger than a few KiB ends the chain early.
// in is never modified.
func (m *Mutator) Mutate(c Chooser, in Case) (out Case, applied []int) {
	out = in
	framing := -1
	chain := 1 + c.Intn(MaxChain)
	// An op that made the case big ends the chain: the big input is its
	// point, and every further op would copy and re-scan all of it.
	big := max(caseSize(in), cheapBytes)
	for range chain {
		if caseSize(out) > big {
			break
		}
		for range maxTries {
			i := m.pick(c)
			if i < 0 {
				break
			}
			if m.defs[i].class == ClassFraming {
				if framing >= 0 {
					continue
				}
				framing = i
				break
			}
			if next, ok := m.ops[i].Apply(c, out, &m.env); ok {
				out = next
				applied = append(applied, i)
				break
			}
		}
	}
	if framing >= 0 {
		if next, ok := m.ops[framing].Apply(c, out, &m.env); ok {
			out = next
			applied = append(applied, framing)
		}
	}
	if len(applied) == 0 {
		start := c.Intn(len(m.ops))
		for k := range m.ops {
			i := (start + k) % len(m.ops)
			if m.weight[i] == 0 {
				continue
			}
			if next, ok := m.ops[i].Apply(c, in, &m.env); ok {
				out = next
				applied = append(applied, i)
				break
			}
		}
	}
	if len(applied) > 0 {
		m.mu.Lock()
		for _, i := range applied {
			m.applied[i]++
		}
		m.mu.Unlock()
	}
	return out, applied
}

func caseSize(c Case) int {
	n := 0
	for _, f := range c.Frames {
		n += len(f)
	}
	return n
}

// Reward raises the weight of the ops of a chain whose output produced
// something new (a new reply tuple, new coverage) by half, up to
// maxWeightRatio times the smallest weight, each weight taken relative to
// the op's start (so an op that starts rare stays rarer than the others by
// the same factor). An op named twice is rewarded once.
func (m *Mutator) Reward(applied []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// smallest is the least weight relative to its start, in units of
	// baseWeight.
	smallest := 0
	for i, w := range m.weight {
		if w > 0 {
			if rel := w * baseWeight / m.start[i]; smallest == 0 || rel < smallest {
				smallest = max(rel, 1)
			}
		}
	}
	for k, i := range applied {
		if i < 0 || i >= len(m.weight) || m.weight[i] == 0 || seenBefore(applied[:k], i) {
			continue
		}
		m.rewarded[i]++
		w := min(m.weight[i]+m.weight[i]/2, max(1, maxWeightRatio*smallest*m.start[i]/baseWeight))
		m.total += w - m.weight[i]
		m.weight[i] = w
	}
	if m.total > weightCeiling {
		m.total = 0
		for i, w := range m.weight {
			if w > 0 {
				m.weight[i] = max(1, w/2)
				m.total += m.weight[i]
			}
		}
	}
}

func seenBefore(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// Stats reports every op of the table, in table order.
func (m *Mutator) Stats() []OpStat {
	m.mu.Lock()
	defer m.mu.Unlock()
	stats := make([]OpStat, len(m.defs))
	for i, d := range m.defs {
		stats[i] = OpStat{
			Name:     d.name,
			Class:    d.class,
			Applied:  m.applied[i],
			Rewarded: m.rewarded[i],
			Weight:   float64(m.weight[i]) / baseWeight,
		}
	}
	return stats
}

// Only rules out every op but the named ones (names of Ops), as an env
// that cannot use them would. It returns an error naming an op that does
// not exist, or when none of the named ops can apply under the env.
func (m *Mutator) Only(names []string) error {
	keep := map[string]bool{}
	for _, n := range names {
		found := false
		for _, d := range m.defs {
			found = found || d.name == n
		}
		if !found {
			all := make([]string, len(m.defs))
			for i, d := range m.defs {
				all[i] = d.name
			}
			return fmt.Errorf("unknown mutation op %q (the ops: %s)", n, strings.Join(all, ", "))
		}
		keep[n] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total = 0
	for i, d := range m.defs {
		if !keep[d.name] {
			m.weight[i], m.start[i] = 0, 0
		}
		m.total += m.weight[i]
	}
	if m.total == 0 {
		return fmt.Errorf("none of the mutation ops %v applies to this target", names)
	}
	return nil
}
