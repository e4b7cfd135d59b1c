package mutate

import (
	"strings"
	"sync"
	"testing"
)

func TestMutateDeterministic(t *testing.T) {
	for _, env := range propertyEnvs() {
		a, b := New(env), New(env)
		ca, cb := NewRand(42), NewRand(42)
		in := frames(sequence...)
		for i := range 300 {
			outA, appA := a.Mutate(ca, in)
			outB, appB := b.Mutate(cb, in)
			if !equalCase(outA, outB) || len(appA) != len(appB) {
				t.Fatalf("step %d: outputs differ (%v vs %v)", i, appA, appB)
			}
			if i%3 == 0 { // the same feedback keeps them in step
				a.Reward(appA)
				b.Reward(appB)
			}
			if len(outA.Frames) > 0 && len(outA.Frames) < 50 {
				in = outA // chain, as a corpus would
			}
		}
	}
}

func TestMutateBytes(t *testing.T) {
	env := propertyEnvs()[0]
	in := frames(req)
	for _, data := range [][]byte{nil, {0}, {0xFF, 0xFF, 0xFF}, []byte("some fuzzer bytes, any will do"), make([]byte, 100)} {
		out1, app1 := New(env).Mutate(NewBytes(data), in)
		out2, app2 := New(env).Mutate(NewBytes(data), in)
		if len(app1) == 0 {
			t.Fatalf("%q: nothing applied", data)
		}
		if !equalCase(out1, out2) || len(app1) != len(app2) {
			t.Fatalf("%q: not deterministic", data)
		}
		checkBounded(t, out1, in, env)
	}
}

func TestMutateInvariants(t *testing.T) {
	for ei, env := range propertyEnvs() {
		m := New(env)
		ops := Ops()
		c := NewRand(uint64(ei))
		for _, e := range append(examples, "") {
			in := frames(e)
			if ei == 0 {
				in = frames(append([]string{e}, sequence...)...)
			}
			for range 40 {
				orig := cloneCase(in)
				out, applied := m.Mutate(c, in)
				if !equalCase(in, orig) {
					t.Fatalf("input modified")
				}
				if len(applied) == 0 || len(applied) > MaxChain {
					t.Fatalf("%d ops applied to %q", len(applied), e)
				}
				checkBounded(t, out, in, env)
				framing := 0
				for k, i := range applied {
					if ops[i].Class == ClassFraming {
						framing++
						if k != len(applied)-1 {
							t.Fatalf("framing op %s not last in %v", ops[i].Name, applied)
						}
					}
				}
				if framing > 1 || (out.Wire != nil) != (framing == 1) {
					t.Fatalf("wire %v after ops %v", out.Wire != nil, applied)
				}
			}
		}
	}
}

func TestMutateNoFrames(t *testing.T) {
	out, applied := New(nil).Mutate(NewRand(1), Case{})
	if len(out.Frames) != 0 || applied != nil {
		t.Fatalf("mutated an empty case: %v %v", out, applied)
	}
}

// TestEligibility: an Env without framing, schemas, corpus, methods or a
// stateful profile never gets the ops that need them.
func TestEligibility(t *testing.T) {
	ruledOut := map[string]bool{"content_length_lie": true, "ndjson_newline": true, "method_dictionary": true,
		"params_schema_valid": true, "params_schema_invalid": true, "seq_skip_handshake": true,
		"seq_after_shutdown": true, "splice_subtree": true, "splice_bytes": true}
	m := New(&Env{})
	c := NewRand(7)
	for i := range 2000 {
		m.Mutate(c, frames([]string{req, named}[i%2]))
	}
	for _, s := range m.Stats() {
		if ruledOut[s.Name] != (s.Weight == 0) || ruledOut[s.Name] && s.Applied > 0 {
			t.Errorf("%s: weight %v, applied %d", s.Name, s.Weight, s.Applied)
		}
		if !ruledOut[s.Name] && s.Applied == 0 {
			t.Errorf("%s never applied in 2000 mutations", s.Name)
		}
	}
}

func TestReward(t *testing.T) {
	m := New(&Env{})
	const favourite = 3 // truncate_structural
	for range 50 {
		m.Reward([]int{favourite, favourite, -1, 9999})
	}
	stats := m.Stats()
	smallest := stats[favourite].Weight
	for _, s := range stats {
		if s.Weight > 0 {
			smallest = min(smallest, s.Weight)
		}
	}
	if w := stats[favourite].Weight; w != maxWeightRatio*smallest {
		t.Fatalf("weight %v, want the cap %v", w, maxWeightRatio*smallest)
	}
	if stats[favourite].Rewarded != 50 {
		t.Fatalf("rewarded %d, want 50 (an op named twice counts once)", stats[favourite].Rewarded)
	}
	// The favourite is now picked about 20 times as often as any other.
	picks := make([]int, len(stats))
	c := NewRand(1)
	for range 20000 {
		picks[m.pick(c)]++
	}
	for i, n := range picks {
		if i != favourite && stats[i].Weight > 0 && n*5 > picks[favourite] {
			t.Fatalf("op %d picked %d times, the favourite %d", i, n, picks[favourite])
		}
	}
}

// TestRewardCeiling: rewarding everything for ever keeps weights bounded
// and positive.
func TestRewardCeiling(t *testing.T) {
	m := New(&Env{})
	all := make([]int, len(Ops()))
	for i := range all {
		all[i] = i
	}
	for range 1000 {
		m.Reward(all)
	}
	if m.total > weightCeiling || m.total <= 0 {
		t.Fatalf("total weight %d", m.total)
	}
	for i, w := range m.weight {
		if (w > 0) != (m.defs[i].eligible(&Env{})) {
			t.Fatalf("op %d weight %d", i, w)
		}
	}
}

// TestMutateConcurrent is for -race: Mutate, Reward and Stats from several
// goroutines, each with its own Chooser.
func TestMutateConcurrent(t *testing.T) {
	m := New(propertyEnvs()[1])
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := NewRand(uint64(g))
			for i := range 200 {
				_, applied := m.Mutate(c, frames(sequence...))
				if i%2 == 0 {
					m.Reward(applied)
				}
				m.Stats()
			}
		}()
	}
	wg.Wait()
	var applied uint64
	for _, s := range m.Stats() {
		applied += s.Applied
	}
	if applied < 800 {
		t.Fatalf("%d ops applied in 800 mutations", applied)
	}
}

func BenchmarkMutate(b *testing.B) {
	m := New(&Env{Methods: []string{"echo", "add"}, Framing: FramingNewline})
	c := NewRand(1)
	in := frames(req)
	b.ReportAllocs()
	for b.Loop() {
		m.Mutate(c, in)
	}
}

// TestOnly: a Mutator limited to some ops applies only those, and refuses
// names that are no op.
func TestOnly(t *testing.T) {
	m := New(&Env{Framing: FramingNewline})
	if err := m.Only([]string{"no-such-op"}); err == nil || !strings.Contains(err.Error(), `"no-such-op"`) {
		t.Fatalf("Only(no-such-op) = %v", err)
	}
	name := ""
	for _, st := range m.Stats() {
		if st.Weight > 0 && st.Class != ClassFraming {
			name = st.Name
			break
		}
	}
	if err := m.Only([]string{name}); err != nil {
		t.Fatal(err)
	}
	ch := NewRand(1)
	in := Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a"]}`)}}
	for range 200 {
		_, applied := m.Mutate(ch, in)
		for _, i := range applied {
			if Ops()[i].Name != name {
				t.Fatalf("applied %s, want only %s", Ops()[i].Name, name)
			}
		}
	}
}
