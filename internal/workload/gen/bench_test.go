package gen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// ethTemplates are the params of an Ethereum read mix: eth_getBalance of a
// fed address at a random block tag, and an eth_call of a fed contract with
// random calldata, value and gas.
func ethTemplates(t testing.TB) (balance, call *Template) {
	var csv strings.Builder
	csv.WriteString("address,label\n")
	for i := range 1000 {
		fmt.Fprintf(&csv, "0x%040x,acct%d\n", i*7919, i)
	}
	feeders := map[string]*Feeder{"addrs": mustLoad(t, "addrs.csv", csv.String(), "random")}
	balance = mustCompile(t, decode(t, `[{"$feed":"addrs.address"},{"$choice":["latest","pending"]}]`), feeders)
	call = mustCompile(t, decode(t, `[{"to":{"$feed":"addrs.address"},"from":"0x0000000000000000000000000000000000000001",
		"data":{"$hex":{"bytes":36}},"value":{"$hexint":[0,1000000]},"gas":{"$hexint":["0x5208","0x1e8480"]}},
		{"$weighted":[{"weight":9,"value":"latest"},{"weight":1,"value":{"$hexint":[1,20000000]}}]}]`), feeders)
	return balance, call
}

// allGenerators uses every generator once.
const allGenerators = `{"i":{"$int":[1,9]},"f":{"$float":[0,1]},"s":{"$string":{"min":1,"max":9,"alphabet":"aé\""}},
	"c":{"$choice":[{"$seq":{}},"x"]},"w":{"$weighted":[{"weight":1,"value":{"$uuid":"v4"}}]},"h":{"$hex":20},
	"q":{"$hexint":[0,"0xffff"]},"n":[{"$now":"unix"},{"$now":"rfc3339"}],"fc":{"$feed":"f.n"},"fr":{"$feed":"f"},"lit":[1,2,3]}`

// TestAppendDoesNotAllocate is the contract the engine relies on: with a
// buffer that has room and a reseeded generator, a request costs no heap.
func TestAppendDoesNotAllocate(t *testing.T) {
	balance, call := ethTemplates(t)
	feeders := map[string]*Feeder{"f": mustLoad(t, "f.jsonl", "{\"n\":1,\"m\":\"x\"}\n{\"n\":2}\n", "once")}
	all := mustCompile(t, decode(t, allGenerators), feeders)
	all.SetClock(func() time.Time { return time.Unix(1, 2) })
	pcg := rand.NewPCG(0, 0)
	r := rand.New(pcg)
	buf := make([]byte, 0, 4096)
	for name, tmpl := range map[string]*Template{"balance": balance, "call": call, "every generator": all} {
		seq := uint64(0)
		allocs := testing.AllocsPerRun(1000, func() {
			seq = seq%2 + 1
			pcg.Seed(42, seq)
			if _, ok := tmpl.Append(buf[:0], r, seq); !ok {
				t.Fatal("exhausted")
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Append", name, allocs)
		}
	}
}

// BenchmarkAppendEthereumMix generates one request's params per op,
// alternating the two templates, reseeding the generator per request as the
// engine does.
func BenchmarkAppendEthereumMix(b *testing.B) {
	balance, call := ethTemplates(b)
	run := func(b *testing.B, templates ...*Template) {
		pcg := rand.NewPCG(0, 0)
		r := rand.New(pcg)
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		seq := uint64(0)
		for b.Loop() {
			seq++
			pcg.Seed(42, seq)
			buf, _ = templates[seq%uint64(len(templates))].Append(buf[:0], r, seq)
		}
	}
	b.Run("mix", func(b *testing.B) { run(b, balance, call) })
	b.Run("getBalance", func(b *testing.B) { run(b, balance) })
	b.Run("call", func(b *testing.B) { run(b, call) })
}

func BenchmarkAppendStatic(b *testing.B) {
	tmpl := mustCompile(b, decode(b, `[{"to":"0x0000000000000000000000000000000000000001","data":"0x70a08231"},"latest"]`), nil)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = tmpl.Append(buf[:0], nil, 1)
	}
}

// TestConcurrentAppend: a Template and its feeders are shared read-only, so
// goroutines generating different seqs get exactly what one goroutine would
// (run with -race).
func TestConcurrentAppend(t *testing.T) {
	balance, call := ethTemplates(t)
	want := make([][]byte, 200)
	for i := range want {
		want[i] = gen(t, call, 3, uint64(i+1))
		want[i] = append(want[i], gen(t, balance, 3, uint64(i+1))...)
	}
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := g; i < len(want); i += 4 {
				seq := uint64(i + 1)
				out, _ := call.Append(nil, newRand(3, seq), seq)
				out, _ = balance.Append(out, newRand(3, seq), seq)
				if string(out) != string(want[i]) {
					done <- fmt.Errorf("seq %d: %s, want %s", seq, out, want[i])
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
