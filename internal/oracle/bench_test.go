package oracle

import (
	"slices"
	"strconv"
	"testing"

	"github.com/rpcload/rpcload/internal/mutate"
)

// benchBatch returns a batch of n calls (every tenth a notification) and
// the correct reply, in reverse order so matching cannot just walk along.
func benchBatch(n int) (input, reply []byte) {
	in, out := make([]string, n), make([]string, 0, n)
	for i := range n {
		if i%10 == 9 {
			in[i] = `{"jsonrpc":"2.0","method":"echo","params":[` + strconv.Itoa(i) + `]}`
			continue
		}
		id := strconv.Itoa(i + 1)
		in[i] = `{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":[1,"a"]}`
		out = append(out, `{"jsonrpc":"2.0","id":`+id+`,"result":[1,"a"]}`)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return []byte(arr(in...)), []byte(arr(out...))
}

// BenchmarkJudgeFuzzReply measures ClassifyRequest plus JudgeFuzzReply,
// the oracle's cost per exec of the native harness, on each input shape.
func BenchmarkJudgeFuzzReply(b *testing.B) {
	batch10, reply10 := benchBatch(10)
	batch1000, reply1000 := benchBatch(1000)
	for _, bc := range []struct {
		name         string
		input, reply []byte
		got          bool
	}{
		{"call", []byte(`{"jsonrpc":"2.0","id":17,"method":"echo","params":[1,"a"]}`), []byte(`{"jsonrpc":"2.0","id":17,"result":[1,"a"]}`), true},
		{"notification", []byte(`{"jsonrpc":"2.0","method":"echo","params":[1,"a"]}`), nil, false},
		{"parse_error", []byte(`{"jsonrpc":"2.0","id":6,"method":`), []byte(errReply("null", -32700)), true},
		{"invalid_request", []byte(`{"jsonrpc":"2.0","id":6,"method":1}`), []byte(errReply("6", -32600)), true},
		{"batch10", batch10, reply10, true},
		{"batch1000", batch1000, reply1000, true},
		{"batch1000_invalid", []byte(arr(slices.Repeat([]string{`7`}, 1000)...)), []byte(arr(slices.Repeat([]string{errReply("null", -32600)}, 1000)...)), true},
		{"replaced_id", []byte("{\"jsonrpc\":\"2.0\",\"id\":\"a\xf0\x90\x80b\",\"method\":\"x\"}"), []byte(result(`"a\ufffdb"`)), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if rules, note := JudgeFuzzReply(bc.input, ClassifyRequest(bc.input), bc.reply, bc.got); rules != 0 {
				b.Fatalf("the benchmark's reply is judged wrong: %s %s", names(rules), note)
			}
			b.ReportAllocs()
			for b.Loop() {
				JudgeFuzzReply(bc.input, ClassifyRequest(bc.input), bc.reply, bc.got)
			}
		})
	}
}

// TestJudgeFuzzReplyAllocs holds JudgeFuzzReply to no allocation for
// replies that break no rule, on the paths of the tolerances: each runs in
// every exec of a fuzz run that meets such an input. (Batches draw their
// scratch space from a sync.Pool, which the race detector empties at
// random; BenchmarkJudgeFuzzReply reports theirs.)
func TestJudgeFuzzReplyAllocs(t *testing.T) {
	cases := []struct{ input, reply string }{
		{call1, res1},
		{`{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("3", -32601)},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"a\xf0\x90\x80b\",\"method\":\"x\"}", result(`"a\ufffdb"`)},
		{`{"jsonrpc":"2.0","id":"\ud800","method":"x"}`, result("\"\uFFFD\"")},
		{`{"jsonrpc":"2.0","method":""}`, errReply("null", -32600)},
		{`{"\udc00":"","id":23372036854775808,"method":"x"}`, errReply("2.337203685477581e+16", -32600)},
		{`{"jsonrpc":"2.0","id":3,"method":"x","params":null}`, result("3")},
		{`{"jsonrpc":"2.0","jsonrpc":null,"id":9,"method":"tools/list","params":0}`, errReply("9", -32602)},
		{`{"jsonrpc":"2.0","id":1,"method":"x","method":5}`, result("1")},
		{nest(70), errReply("1", -32603)},
	}
	for _, tc := range cases {
		in, reply := []byte(tc.input), []byte(tc.reply)
		class := ClassifyRequest(in)
		if rules, note := JudgeFuzzReply(in, class, reply, true); rules != 0 {
			t.Fatalf("JudgeFuzzReply(%q, %q) = %s %s; want no finding", tc.input, tc.reply, names(rules), note)
		}
		if a := testing.AllocsPerRun(50, func() { JudgeFuzzReply(in, class, reply, true) }); a != 0 {
			t.Errorf("JudgeFuzzReply(%q, %q) allocates %v times per call", tc.input, tc.reply, a)
		}
	}
}

// mutatedExchanges returns the frames of n cases of exchanger, drawn from
// seed, and the correct target's replies: the traffic the oracle judges in a
// fuzz run against a server without bugs.
func mutatedExchanges(seed uint64, n int) (frames, replies [][]byte) {
	x := newExchanger()
	c := mutate.NewRand(seed)
	for k := range n {
		for _, f := range x.frames(c, k) {
			frames = append(frames, f)
			replies = append(replies, x.answer(f))
		}
	}
	return frames, replies
}

// BenchmarkJudgeMutated judges the correct target's replies to mutated
// seeds, the mix a fuzz run sees.
func BenchmarkJudgeMutated(b *testing.B) {
	frames, replies := mutatedExchanges(1, 2000)
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	b.ReportAllocs()
	b.ReportMetric(float64(size)/float64(len(frames)), "bytes/frame")
	i := 0
	for b.Loop() {
		f, r := frames[i%len(frames)], replies[i%len(frames)]
		JudgeFuzzReply(f, ClassifyRequest(f), r, r != nil)
		i++
	}
}
