package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/workload"
)

// counterParams is a Template for tests: {"n": <seq>, "r": <a draw>}.
type counterParams struct{}

func (counterParams) Append(dst []byte, r *rand.Rand, seq uint64) ([]byte, bool) {
	dst = append(dst, `{"n":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, `,"r":`...)
	dst = strconv.AppendUint(dst, r.Uint64N(1000), 10)
	return append(dst, '}'), true
}

// limitedParams runs out after n calls (a feeder read once).
type limitedParams struct{ n uint64 }

func (l limitedParams) Append(dst []byte, _ *rand.Rand, seq uint64) ([]byte, bool) {
	if seq > l.n {
		return dst, false
	}
	return append(dst, `[1]`...), true
}

// TestMixAgainstReferenceServer: calls are picked by weight, each counted
// under its name; an echo with generated params passes its expectation; a
// notification call sends notifications; the same seed picks the same calls.
func TestMixAgainstReferenceServer(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	code := int64(-32601)
	mix := []workload.Call{
		{Name: "echo", Method: "echo", Params: counterParams{}, Weight: 6, Expect: workload.Expect{ResultEqualsParams: true}},
		{Name: "add", Method: "add", Params: workload.StaticParams(`[2,3]`), Weight: 3, Expect: workload.Expect{ResultEquals: []byte(` 5 `)}},
		{Name: "missing", Method: "no_such_method", Weight: 1, Expect: workload.Expect{ErrorCode: &code}},
		{Name: "note", Method: "echo", Notify: true, Weight: 2},
	}
	run := func(seed uint64) map[string]uint64 {
		cfg := baseConfig(target(t, tcpURL))
		cfg.Calls, cfg.Seed = append([]workload.Call(nil), mix...), seed
		cfg.Rate, cfg.Duration = 6000, 200*time.Millisecond
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) != 0 || res.Requests.TransportErrors+res.Requests.Timeouts != 0 {
			t.Fatalf("violations %v samples %v requests %+v", res.Violations, res.ViolationSamples, res.Requests)
		}
		counts := map[string]uint64{}
		for name, m := range res.Methods {
			counts[name] = m.Requests.Sent + m.Requests.Notifications
		}
		if n := res.Requests.Notifications; n != counts["note"] || n == 0 {
			t.Errorf("notifications %d, the note call sent %d", n, counts["note"])
		}
		if res.Methods["missing"].Requests.RPCErrors != counts["missing"] {
			t.Errorf("missing: %+v", res.Methods["missing"].Requests)
		}
		return counts
	}
	a := run(1)
	total := 0.0
	for _, n := range a {
		total += float64(n)
	}
	if total != 1200 {
		t.Fatalf("sent %v calls in all, want 1200", total)
	}
	for _, c := range mix {
		want := total * c.Weight / 12
		sd := math.Sqrt(want * (1 - c.Weight/12))
		if d := math.Abs(float64(a[c.Name]) - want); d > 5*sd {
			t.Errorf("%s sent %d times, want about %.0f (weight %g of 12)", c.Name, a[c.Name], want, c.Weight)
		}
	}
	if b := run(1); b["echo"] != a["echo"] || b["add"] != a["add"] || b["note"] != a["note"] {
		t.Errorf("seed 1 picked %v, then %v", a, b)
	}
	if c := run(2); c["echo"] == a["echo"] && c["add"] == a["add"] && c["note"] == a["note"] {
		t.Errorf("seeds 1 and 2 picked the same calls %v", c)
	}
}

// swapServer answers every request with another request's params: it
// swaps the ids of each pair of requests on a connection, which only an
// echo check can see.
func swapServer(t *testing.T) string {
	var mu sync.Mutex
	var held map[string]json.RawMessage // per the server: one held request
	return lineServer(t, func(line []byte) []byte {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if held == nil {
			held = map[string]json.RawMessage{"id": m.ID, "params": m.Params}
			return nil
		}
		out := `{"jsonrpc":"2.0","id":` + string(held["id"]) + `,"result":` + string(m.Params) + "}\n" +
			`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + string(held["params"]) + "}\n"
		held = nil
		return []byte(out)
	})
}

// TestExpectationFailed: a server that answers each request with another
// request's params breaks result_equals_params on every reply, counted as
// expectation_failed with the reason, under the call's name.
func TestExpectationFailed(t *testing.T) {
	cfg := baseConfig(target(t, swapServer(t)))
	cfg.Conns = 1
	cfg.Calls = []workload.Call{{Name: "echo", Method: "echo", Params: counterParams{}, Expect: workload.Expect{ResultEqualsParams: true}}}
	cfg.Rate, cfg.Duration = 1000, 100*time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests.OK != 100 || res.Violations["expectation_failed"] != 100 || len(res.Violations) != 1 {
		t.Fatalf("requests %+v violations %v", res.Requests, res.Violations)
	}
	s := res.ViolationSamples["expectation_failed"]
	if len(s) == 0 || s[0].Method != "echo" || !strings.Contains(s[0].Note, "not the params sent") {
		t.Errorf("samples %+v", s)
	}
}

// failingValidator rejects results that are not objects.
type failingValidator struct{}

func (failingValidator) Validate(v any) error {
	if _, ok := v.(map[string]any); !ok {
		return errors.New("want an object")
	}
	return nil
}

// TestExpectationKinds: each kind of expectation, passing and failing,
// judged against the reference server's replies.
func TestExpectationKinds(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	code := func(c int64) *int64 { return &c }
	tests := []struct {
		name   string
		call   workload.Call
		failed bool
	}{
		{"error code right", workload.Call{Method: "nosuch", Expect: workload.Expect{ErrorCode: code(-32601)}}, false},
		{"error code wrong", workload.Call{Method: "nosuch", Expect: workload.Expect{ErrorCode: code(-32602)}}, true},
		{"error code but a result", workload.Call{Method: "add", Params: workload.StaticParams(`[1,2]`), Expect: workload.Expect{ErrorCode: code(-32601)}}, true},
		{"result equals", workload.Call{Method: "add", Params: workload.StaticParams(`[1,2]`), Expect: workload.Expect{ResultEquals: []byte(`3.0`)}}, false},
		{"result differs", workload.Call{Method: "add", Params: workload.StaticParams(`[1,2]`), Expect: workload.Expect{ResultEquals: []byte(`4`)}}, true},
		{"echo with keys reordered", workload.Call{Method: "echo", Params: workload.StaticParams(`{"b":[1,2],"a":"x"}`), Expect: workload.Expect{ResultEqualsParams: true}}, false},
		{"schema passes", workload.Call{Method: "echo", Params: workload.StaticParams(`{"a":1}`), Expect: workload.Expect{Result: failingValidator{}}}, false},
		{"schema fails", workload.Call{Method: "add", Params: workload.StaticParams(`[1,2]`), Expect: workload.Expect{Result: failingValidator{}}}, true},
		{"a result expected, an error came", workload.Call{Method: "nosuch", Expect: workload.Expect{ResultEquals: []byte(`1`)}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, tcpURL))
			cfg.Calls = []workload.Call{tc.call}
			cfg.Rate, cfg.Duration = 500, 20*time.Millisecond
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := uint64(0)
			if tc.failed {
				want = res.Requests.Answered
			}
			if res.Requests.Answered == 0 || res.Violations["expectation_failed"] != want {
				t.Fatalf("answered %d, expectation_failed %d, want %d; samples %+v", res.Requests.Answered, res.Violations["expectation_failed"], want, res.ViolationSamples)
			}
		})
	}
}

// TestParamsRunOut: a call whose data runs out ends the sending early; the
// run still completes with what was sent.
func TestParamsRunOut(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	cfg := baseConfig(target(t, tcpURL))
	cfg.Calls = []workload.Call{{Method: "echo", Params: limitedParams{n: 30}}}
	cfg.Rate, cfg.Duration = 1000, 10*time.Second
	start := time.Now()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests.Sent != 30 || res.Requests.OK != 30 || res.Interrupted {
		t.Fatalf("requests %+v interrupted %v", res.Requests, res.Interrupted)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the run went on for %v after its data ran out", took)
	}
}

// TestDryRun: the messages a run would send, without a connection, the
// same for the same seed.
func TestDryRun(t *testing.T) {
	cfg := baseConfig(target(t, "tcp://127.0.0.1:1"))
	cfg.Calls = []workload.Call{{Method: "echo", Params: counterParams{}, Weight: 2}, {Method: "add", Params: workload.StaticParams(`[1,2]`), Notify: true}}
	cfg.Seed = 3
	var a, b strings.Builder
	if err := DryRun(cfg, 5, &a); err != nil {
		t.Fatal(err)
	}
	DryRun(cfg, 5, &b)
	lines := strings.Split(strings.TrimSpace(a.String()), "\n")
	if len(lines) != 5 || a.String() != b.String() {
		t.Fatalf("dry runs:\n%s\n%s", a.String(), b.String())
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) || !strings.Contains(l, `"jsonrpc":"2.0"`) {
			t.Errorf("line %q", l)
		}
	}
	cfg.Calls = []workload.Call{{Method: "echo", Params: limitedParams{n: 2}}}
	var c strings.Builder
	DryRun(cfg, 5, &c)
	if got := strings.Count(c.String(), "\n"); got != 3 || !strings.Contains(c.String(), "ran out") {
		t.Errorf("a template that runs out after 2:\n%s", c.String())
	}
}

// TestIDReuseProbe: probes take the id of a request in flight; what the
// server does with them is reported apart and counts nothing against the
// load. The reference server answers both requests; a server that refuses
// a reused id with -32600 is told apart.
func TestIDReuseProbe(t *testing.T) {
	refusing := lineServer(t, func() func([]byte) []byte {
		var mu sync.Mutex
		seen := map[string]bool{}
		return func(line []byte) []byte {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(line, &m)
			mu.Lock()
			defer mu.Unlock()
			if seen[string(m.ID)] {
				return []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32600,"message":"id in use"}}` + "\n")
			}
			seen[string(m.ID)] = true
			return nil // the originals are answered at the end: hold them
		}
	}())
	_, _, tcpURL := startServer(t, testsrv.Config{})
	for _, tc := range []struct {
		name, url string
		check     func(t *testing.T, rep *stats.IDReuseReport, q stats.Requests)
	}{
		{"reference server answers both", tcpURL, func(t *testing.T, rep *stats.IDReuseReport, q stats.Requests) {
			if rep.BothAnswered+rep.OneReply != rep.Probes || q.OK != q.Sent {
				t.Errorf("report %+v requests %+v", rep, q)
			}
		}},
		{"refused with -32600", refusing, func(t *testing.T, rep *stats.IDReuseReport, q stats.Requests) {
			if rep.ErrorCodes["-32600"] != rep.Probes || q.RPCErrors != 0 {
				t.Errorf("report %+v requests %+v: the refusals must be the probes', not the load's", rep, q)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, tc.url))
			cfg.Conns = 1
			cfg.Calls = []workload.Call{{Method: "sleep", Params: workload.StaticParams(`{"ms":50}`), Weight: 3}, {Name: "probe", Method: "echo", Params: workload.StaticParams(`[1]`), IDReuse: true}}
			cfg.Rate, cfg.Duration, cfg.Timeout, cfg.Drain = 400, 100*time.Millisecond, 200*time.Millisecond, 300*time.Millisecond
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			rep := res.IDReuse
			if rep == nil || rep.Probes == 0 {
				t.Fatalf("id reuse report %+v", rep)
			}
			if res.Violations["duplicate_reply"] != 0 || res.Violations["unknown_id"] != 0 {
				t.Errorf("violations %v: the probes' replies were judged against the load", res.Violations)
			}
			tc.check(t, rep, res.Requests)
		})
	}
}
