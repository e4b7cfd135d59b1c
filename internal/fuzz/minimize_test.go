package fuzz

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/jsontree"
	"github.com/rpcload/rpcload/internal/mutate"
)

func frames(fs ...string) mutate.Case {
	var c mutate.Case
	for _, f := range fs {
		c.Frames = append(c.Frames, []byte(f))
	}
	return c
}

func depthOf(f []byte) int {
	d, best := 0, 0
	for _, c := range f {
		switch c {
		case '[', '{':
			d++
			best = max(best, d)
		case ']', '}':
			d--
		}
	}
	return best
}

func TestMinimize(t *testing.T) {
	any := func(c mutate.Case, fn func([]byte) bool) bool {
		for _, f := range c.Frames {
			if fn(f) {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		name  string
		in    mutate.Case
		fails func(mutate.Case) bool
		want  string // the frames of the result, joined by |; or only its length:
		size  int
	}{
		{
			name: "drop frames and members",
			in:   frames(`{"jsonrpc":"2.0","id":1,"method":"echo"}`, `{"jsonrpc":"2.0","id":2,"method":"boom","params":[1,2,3]}`, `[]`),
			fails: func(c mutate.Case) bool {
				return any(c, func(f []byte) bool { return bytes.Contains(f, []byte(`"boom"`)) })
			},
			want: `"boom"`,
		},
		{
			name: "halve nesting",
			in:   frames(`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`),
			fails: func(c mutate.Case) bool {
				return any(c, func(f []byte) bool { return depthOf(f) > 64 })
			},
			size: 65, // the byte pass goes on past the tree: 65 brackets of any kind
		},
		{
			name: "batch elements as 0",
			in:   frames("[" + strings.Repeat(`{"jsonrpc":"2.0","method":"x"},`, 1500) + "null]"),
			fails: func(c mutate.Case) bool {
				return any(c, func(f []byte) bool { return bytes.Count(f, []byte(",")) >= 1000 })
			},
			size: 1000, // the tree pass leaves [0,...,0]; the byte pass keeps the commas
		},
		{
			name: "shorten strings",
			in:   frames(`{"method":"` + strings.Repeat("é\\u0041", 300) + `XY` + strings.Repeat("z", 500) + `"}`),
			fails: func(c mutate.Case) bool {
				return any(c, func(f []byte) bool { return bytes.Contains(f, []byte("XY")) })
			},
			want: "XY",
		},
		{
			name: "simplify numbers",
			in:   frames(`{"id":123456789012345678901234,"x":77}`),
			fails: func(c mutate.Case) bool {
				return any(c, func(f []byte) bool { return bytes.Contains(f, []byte("12345678901")) })
			},
			want: "12345678901",
		},
		{
			name: "bytes of text that is not JSON",
			in:   frames(`{"a":[1,2,3 oops, "b": NaN}`),
			fails: func(c mutate.Case) bool {
				return any(c, func(f []byte) bool { return bytes.Contains(f, []byte("NaN")) })
			},
			want: "NaN",
		},
		{
			name: "wire bytes dropped when the frames fail too",
			in:   mutate.Case{Frames: [][]byte{[]byte(`"boom"`)}, Wire: []byte("Content-Length: 99\r\n\r\n\"boom\"")},
			fails: func(c mutate.Case) bool {
				return any(c, func(f []byte) bool { return bytes.Contains(f, []byte("boom")) })
			},
			want: "boom",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks := 0
			check := func(_ context.Context, c mutate.Case) bool { checks++; return tc.fails(c) }
			got, res := minimize(context.Background(), tc.in, check, 5000, time.Time{})
			if !tc.fails(got) {
				t.Fatalf("the result %q does not fail", got.Frames)
			}
			if got.Wire != nil {
				t.Errorf("wire bytes kept: %q", got.Wire)
			}
			joined := string(bytes.Join(got.Frames, []byte("|")))
			if tc.size > 0 && len(joined) != tc.size || tc.size == 0 && joined != tc.want {
				t.Errorf("got %.200q (%d bytes), want %.200q", joined, len(joined), tc.want)
			}
			if res.checks != checks || !res.complete {
				t.Errorf("result %+v, %d checks made", res, checks)
			}
		})
	}
}

func TestMinimizeBudget(t *testing.T) {
	in := frames(strings.Repeat("x", 10_000))
	fails := func(_ context.Context, c mutate.Case) bool { return len(c.Frames[0]) > 10 }
	got, res := minimize(context.Background(), in, fails, 25, time.Time{})
	if res.checks != 25 || res.complete {
		t.Errorf("result %+v: the budget is 25 checks", res)
	}
	if len(got.Frames[0]) >= 10_000 || len(got.Frames[0]) <= 10 {
		t.Errorf("got %d bytes", len(got.Frames[0]))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, res = minimize(ctx, in, fails, 100, time.Time{})
	if res.checks != 0 || res.complete || len(got.Frames[0]) != 10_000 {
		t.Errorf("cancelled: %+v, %d bytes", res, len(got.Frames[0]))
	}
}

// TestMinimizeLadder: a ladder of one-member objects, as the mutator
// builds it, shrinks to nesting as bare brackets within a small budget;
// before ladders were tried whole, every rung was a starting point of
// halveNesting and dropKids and 200 checks left 391 bytes of `{"a":`.
func TestMinimizeLadder(t *testing.T) {
	ladder := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "{}" + strings.Repeat(close, n)
	}
	deep := func(c mutate.Case) bool { return len(c.Frames) > 0 && depthOf(c.Frames[0]) > 64 }
	for _, tc := range []struct {
		name   string
		in     string
		fails  func(mutate.Case) bool
		budget int
		within int // the most bytes the result may have
	}{
		{"objects in params", `{"jsonrpc":"2.0","jsonrpc":2,"id":null,"method":"echo","params":` + ladder(`{"a":`, "}", 128) + `}`, deep, 60, 2 * 65},
		{"objects at the top", ladder(`{"abc":`, "}", 300), deep, 60, 2 * 65},
		{"arrays beside members", `{"id":1,"x":[1,2],"params":` + ladder("[", "]", 200) + `}`, deep, 60, 2 * 65},
		{"member names needed", `{"id":1,"params":` + ladder(`{"k":`, "}", 100) + `}`, func(c mutate.Case) bool {
			return deep(c) && bytes.Count(c.Frames[0], []byte(`"k"`)) > 60
		}, 200, 65*5 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks := 0
			check := func(_ context.Context, c mutate.Case) bool { checks++; return tc.fails(c) }
			got, res := minimize(context.Background(), frames(tc.in), check, tc.budget, time.Time{})
			if !tc.fails(got) {
				t.Fatalf("the result %q does not fail", got.Frames)
			}
			if n := caseSize(got); n > tc.within {
				t.Errorf("%d -> %d bytes in %d checks (%+v), want at most %d: %.200q", len(tc.in), n, checks, res, tc.within, got.Frames[0])
			}
		})
	}
}

// TestHeightsDeep: the heights of a ladder far deeper than a stack would
// hold recursion, as halveNesting sees them.
func TestHeightsDeep(t *testing.T) {
	const depth = 200_000
	for _, in := range []string{
		strings.Repeat("[", depth) + strings.Repeat("]", depth),
		strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1),
	} {
		root, ok := jsontree.Parse([]byte(in), strictTree)
		if !ok {
			t.Fatal("a deep ladder did not parse")
		}
		if h := heights(root)[root]; h != depth-1 {
			t.Errorf("height %d, want %d", h, depth-1)
		}
	}
}
