package testsrv

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestTransportsCases runs the exact-output table over every transport, one
// case at a time on one connection.
func TestTransportsCases(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, Config{})
			c := tr.dial(t, s)
			for _, tc := range allCases() {
				// The sentinel proves a missing reply is missing (not late):
				// it is answered at once, so anything the case sends that is
				// not slow comes before it.
				c.send(tc.in, sentinel)
				var got []string
				for !slices.Contains(got, sentinelReply) || (tc.want != "" && len(got) < 2) {
					got = append(got, mustRecv(t, c))
				}
				want := []string{sentinelReply}
				if tc.want != "" {
					want = append(want, tc.want)
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s: in:   %s\ngot:  %q\nwant: %q", tc.name, tc.in, got, want)
				}
			}
			if got := c.rest(); len(got) != 0 {
				t.Errorf("extra replies: %q", got)
			}
			if got, want := s.Requests(), uint64(2*len(allCases())); got != want {
				t.Errorf("Requests() = %d, want %d", got, want)
			}
		})
	}
}

// TestTransportsPipelined sends the whole table at once, then closes the
// sending side: every reply still arrives, each exactly once.
func TestTransportsPipelined(t *testing.T) {
	var in, want []string
	for _, tc := range allCases() {
		in = append(in, tc.in)
		if tc.want != "" {
			want = append(want, tc.want)
		}
	}
	slices.Sort(want)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, Config{})
			c := tr.dial(t, s)
			c.send(in...)
			got := c.rest()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("got %d replies, want %d\ngot:  %q\nwant: %q", len(got), len(want), got, want)
			}
		})
	}
}

// TestTransportsFaults: every fault on every transport, with the replies the
// client sees and the exact Injected counts. On WebSocket the server's close
// frame says 1000 (normal closure), for the close fault too.
func TestTransportsFaults(t *testing.T) {
	for _, tr := range transports {
		for _, tc := range faultCases {
			t.Run(tr.name+"/"+string(tc.fault), func(t *testing.T) {
				t.Parallel()
				s := newTestServer(t, Config{Faults: []FaultSpec{{tc.fault, 1}}, FaultDelay: 30 * time.Millisecond})
				c := tr.dial(t, s)
				start := time.Now()
				c.send(tc.in...)
				got := c.rest() // close and drop: the end with no reply
				if !slices.Equal(got, tc.want) {
					t.Errorf("got  %q\nwant %q", got, tc.want)
				}
				if tc.fault == FaultDelay && time.Since(start) < 30*time.Millisecond {
					t.Errorf("delay fault answered after %v", time.Since(start))
				}
				if wc, ok := c.(*wsClient); ok && wc.code != 1000 {
					t.Errorf("close code %d, want 1000", wc.code)
				}
				if got := s.Injected(); !maps.Equal(got, wantInjected(tc.fault, tc.n)) {
					t.Errorf("Injected() = %v", got)
				}
			})
		}
	}
}

// TestTransportsCloseFaultFlushes replays the documented PRNG (the first
// connection uses Seed+0) to know which frame closes the connection: every
// frame before it is answered, none after it, on every transport.
func TestTransportsCloseFaultFlushes(t *testing.T) {
	const n, prob = 40, 0.3
	seed, first := uint64(0), 0
	for ; ; seed++ { // the first seed whose first close is not on frame 0
		r := newRand(seed)
		for first = 0; first < n && r.Float64() >= prob; first++ {
		}
		if first > 2 && first < n {
			break
		}
	}
	var in, want []string
	for i := range n {
		in = append(in, req(strconv.Itoa(i), "eth_chainId", ""))
		if i < first {
			want = append(want, res(strconv.Itoa(i), `"0x539"`))
		}
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, Config{Seed: seed, Faults: []FaultSpec{{FaultClose, prob}}})
			c := tr.dial(t, s)
			c.send(in...)
			var got []string
			for l, ok := c.recv(); ok; l, ok = c.recv() { // the server closes
				got = append(got, l)
			}
			if !slices.Equal(got, want) {
				t.Errorf("seed %d, close at frame %d:\ngot  %q\nwant %q", seed, first, got, want)
			}
			if got := s.Injected()[FaultClose]; got != 1 {
				t.Errorf("Injected[close] = %d", got)
			}
		})
	}
}

// TestTransportsHalfCloseDeliversPending: slow replies (timer, busy-wait,
// method delay) pending when the client stops sending are still delivered.
func TestTransportsHalfCloseDeliversPending(t *testing.T) {
	want := []string{res("1", "true"), res("2", "true"), res("3", "2")}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, Config{})
			c := tr.dial(t, s)
			c.send(req("1", "sleep", "[30]"), req("2", "spin", "[100]"), req("3", "convert", "[1,2]"))
			got := c.rest()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestTransportsOutOfOrder: replies leave in completion order.
func TestTransportsOutOfOrder(t *testing.T) {
	want := []string{res("2", `"14:05"`), res("3", "true"), res("1", "true")}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, Config{})
			c := tr.dial(t, s)
			c.send(req("1", "sleep", `{"ms":50}`), req("2", "get_time", ""), req("3", "sleep", "[20]"))
			for i, w := range want {
				if got := mustRecv(t, c); got != w {
					t.Errorf("reply %d = %s, want %s", i, got, w)
				}
			}
		})
	}
}
