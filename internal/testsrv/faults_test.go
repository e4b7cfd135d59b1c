package testsrv

import (
	"context"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		def     float64
		want    []FaultSpec
		wantErr string // substring; "" = no error
	}{
		{"", 1, nil, ""},
		{"  ", 1, nil, ""},
		{"drop", 0.5, []FaultSpec{{FaultDrop, 0.5}}, ""},
		{"drop,duplicate=0.05,close=1%", 1, []FaultSpec{{FaultDrop, 1}, {FaultDuplicate, 0.05}, {FaultClose, 0.01}}, ""},
		{" delay = 100% , null_id=1 ", 0.1, []FaultSpec{{FaultDelay, 1}, {FaultNullID, 1}}, ""},
		{"drop,teleport", 1, nil, `"teleport": unknown fault "teleport" (valid names: drop, duplicate, unknown_id`},
		{"drop=0", 1, nil, `"drop=0": probability 0 is outside (0,1]`},
		{"drop=1.5", 1, nil, `"drop=1.5": probability 1.5 is outside (0,1]`},
		{"drop=150%", 1, nil, "outside (0,1]"},
		{"drop=-0.1", 1, nil, "outside (0,1]"},
		{"drop=NaN", 1, nil, "outside (0,1]"},
		{"drop=x", 1, nil, `"drop=x": bad probability "x"`},
		{"drop", 0, nil, `"drop": probability 0 is outside (0,1]`},
		{"drop,,close", 1, nil, "empty item"},
		{"drop,drop=0.5", 1, nil, `fault "drop" listed twice`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := ParseFaults(tc.spec, tc.def)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrFaultSpec) ||
					!strings.HasPrefix(err.Error(), "testsrv: ") {
					t.Fatalf("err = %v, want one containing %q wrapping ErrFaultSpec", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	for name, cfg := range map[string]Config{
		"unknown fault": {Faults: []FaultSpec{{"nope", 1}}},
		"zero prob":     {Faults: []FaultSpec{{FaultDrop, 0}}},
		"twice":         {Faults: []FaultSpec{{FaultDrop, 1}, {FaultDrop, 0.5}}},
		"neg delay":     {FaultDelay: -1},
		"neg maxframe":  {MaxFrame: -1},
		"neg stall":     {Stall: Stall{At: -time.Second, For: time.Second}},
	} {
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), "testsrv: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if len(Faults()) != int(numFIDs)-1 {
		t.Errorf("Faults() lists %d of %d", len(Faults()), numFIDs-1)
	}
}

var (
	r7     = req("7", "eth_chainId", "")
	ok7    = res("7", `"0x539"`)
	rs7    = req(`"7"`, "eth_chainId", "")
	rabc   = req(`"abc"`, "eth_chainId", "")
	okabc  = res(`"abc"`, `"0x539"`)
	notify = `{"jsonrpc":"2.0","method":"get_time"}`
)

// faultCases: frames sent one connection (TCP) or one POST each (HTTP), the
// replies in order, and how often the fault must have been injected.
var faultCases = []struct {
	fault Fault
	in    []string
	want  []string // TCP lines; for HTTP, the bodies of 200 replies in order
	n     uint64
}{
	{FaultDrop, []string{r7}, nil, 1},
	{FaultDuplicate, []string{r7}, []string{ok7, ok7}, 1},
	{FaultUnknownID, []string{r7, rabc}, []string{res("9000000000000001", `"0x539"`), res(`"unknown-2"`, `"0x539"`)}, 2},
	{FaultIDType, []string{r7, rs7, rabc}, []string{res(`"7"`, `"0x539"`), res("7", `"0x539"`), okabc}, 2},
	{FaultBoth, []string{r7, req("8", "teleport", "")}, []string{
		`{"jsonrpc":"2.0","id":7,"result":"0x539","error":{"code":-32603,"message":"Internal error"}}`,
		`{"jsonrpc":"2.0","id":8,"result":null,"error":{"code":-32601,"message":"Method not found","data":"teleport"}}`}, 2},
	{FaultNeither, []string{r7}, []string{`{"jsonrpc":"2.0","id":7}`}, 1},
	{FaultBadVersion, []string{r7}, []string{`{"jsonrpc":"1.0","id":7,"result":"0x539"}`}, 1},
	{FaultGarbage, []string{r7}, []string{garbageBody}, 1},
	{FaultInvalidEnvelope, []string{r7}, []string{`{"hello":"world"}`}, 1},
	{FaultBadError, []string{r7}, []string{`{"jsonrpc":"2.0","id":7,"error":{"code":"-32603"}}`}, 1},
	{FaultNullID, []string{r7, `{"id":1}`}, []string{errr("null", "-32600", "Invalid Request", ""), bad("1", `"bad_version|no_result_or_error"`)}, 1},
	{FaultNotifyReply, []string{notify, r7, `[` + notify + `,` + r7 + `]`}, []string{
		res("null", `"14:05"`), ok7, `[` + res("null", `"14:05"`) + `,` + ok7 + `]`}, 2},
	{FaultNotifyReplyNoID, []string{notify, r7, `[` + notify + `,` + r7 + `]`}, []string{
		`{"jsonrpc":"2.0","result":"14:05"}`, ok7, `[{"jsonrpc":"2.0","result":"14:05"},` + ok7 + `]`}, 2},
	{FaultClose, []string{r7}, nil, 1},
	{FaultDelay, []string{r7}, []string{ok7}, 1},
}

func wantInjected(f Fault, n uint64) map[Fault]uint64 {
	m := map[Fault]uint64{}
	for _, g := range Faults() {
		m[g] = 0
	}
	m[f] = n
	return m
}

func TestFaultsTCP(t *testing.T) {
	for _, tc := range faultCases {
		t.Run(string(tc.fault), func(t *testing.T) {
			s := newTestServer(t, Config{Faults: []FaultSpec{{tc.fault, 1}}, FaultDelay: 30 * time.Millisecond})
			_, addr := serve(t, s)
			c := dial(t, addr)
			start := time.Now()
			c.send(tc.in...)
			got := c.rest() // close and drop: EOF with no line
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if tc.fault == FaultDelay && time.Since(start) < 30*time.Millisecond {
				t.Errorf("delay fault answered after %v", time.Since(start))
			}
			if got := s.Injected(); !maps.Equal(got, wantInjected(tc.fault, tc.n)) {
				t.Errorf("Injected() = %v", got)
			}
		})
	}
}

func TestFaultsHTTP(t *testing.T) {
	for _, tc := range faultCases {
		if tc.fault == FaultDrop {
			continue // TestHTTPDrop: needs a client that gives up
		}
		t.Run(string(tc.fault), func(t *testing.T) {
			s := newTestServer(t, Config{Faults: []FaultSpec{{tc.fault, 1}}, FaultDelay: 30 * time.Millisecond})
			url, _ := serve(t, s)
			cl := newClient(t)
			var got []string
			for _, in := range tc.in {
				resp, err := cl.Post(url, "application/json", strings.NewReader(in))
				if tc.fault == FaultClose {
					if err == nil {
						resp.Body.Close()
						t.Fatalf("close: got a response %d", resp.StatusCode)
					}
					continue
				}
				if err != nil {
					t.Fatalf("POST: %v", err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Length") != strconv.Itoa(len(b)) {
					t.Fatalf("status %d, Content-Length %q, body %q", resp.StatusCode, resp.Header.Get("Content-Length"), b)
				}
				// duplicate on HTTP: both copies in one body, newline-separated.
				got = append(got, strings.Split(string(b), "\n")...)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if got := s.Injected(); !maps.Equal(got, wantInjected(tc.fault, tc.n)) {
				t.Errorf("Injected() = %v", got)
			}
		})
	}
}

// probe wraps a handler: it reports when the request body was read to EOF
// (the server has then registered the request) and what the handler did.
type probe struct {
	h        http.Handler
	bodyRead chan struct{}
	result   chan string
}

type signalBody struct {
	io.ReadCloser
	once func()
}

func (b signalBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once()
	}
	return n, err
}

type recordingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *recordingWriter) WriteHeader(code int) { w.wrote = true; w.ResponseWriter.WriteHeader(code) }
func (w *recordingWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (p *probe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var done bool
	r.Body = signalBody{r.Body, func() {
		if !done {
			done = true
			close(p.bodyRead)
		}
	}}
	rw := &recordingWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		switch {
		case v == http.ErrAbortHandler:
			p.result <- "aborted"
			panic(v) // let net/http abort the response
		case v != nil:
			p.result <- "panic"
			panic(v)
		case rw.wrote:
			p.result <- "wrote"
		default:
			p.result <- "nothing"
		}
	}()
	p.h.ServeHTTP(rw, r)
}

func newProbe(h http.Handler) *probe {
	return &probe{h: h, bodyRead: make(chan struct{}), result: make(chan string, 1)}
}

func TestHTTPDrop(t *testing.T) {
	s := newTestServer(t, Config{Faults: []FaultSpec{{FaultDrop, 1}}})
	p := newProbe(s.Handler())
	hs := httptest.NewServer(p)
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(r7))
		resp, err := hs.Client().Do(r)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-p.bodyRead
	cancel() // the client gives up
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v, want context.Canceled", err)
	}
	if got := <-p.result; got != "nothing" {
		t.Errorf("handler %s, want nothing written", got)
	}
	if n := s.Injected()[FaultDrop]; n != 1 {
		t.Errorf("Injected[drop] = %d", n)
	}
}

func TestFaultTargetsInBatch(t *testing.T) {
	s := newTestServer(t, Config{})
	frame := `[` + notify + `,{"foo":1},` + req(`"x"`, "eth_chainId", "") + `,` + r7 + `]`
	head := bad("null", `"bad_version|no_result_or_error|extra_member"`)
	for _, tc := range []struct {
		f    fid
		want string
	}{
		{fUnknownID, `[` + head + `,` + res(`"unknown-1"`, `"0x539"`) + `,` + ok7 + `]`},
		{fIDType, `[` + head + `,` + res(`"x"`, `"0x539"`) + `,` + res(`"7"`, `"0x539"`) + `]`},
		{fNullID, `[` + head + `,` + errr("null", "-32600", "Invalid Request", "") + `,` + ok7 + `]`},
		{fNeither, `[{"jsonrpc":"2.0","id":null},` + res(`"x"`, `"0x539"`) + `,` + ok7 + `]`},
	} {
		p := s.getProc()
		p.eval([]byte(frame))
		f, target := p.roll([]fspec{{tc.f, 1}}, rand.New(rand.NewPCG(1, 2)))
		if got := string(p.assemble(nil, f, target)); f != tc.f || got != tc.want {
			t.Errorf("%s: got %s\nwant %s", tc.f.fault(), got, tc.want)
		}
		putProc(p)
	}
	// Faults that need an id are skipped on frames without one, in favour of
	// the next fault in order.
	p := s.getProc()
	defer putProc(p)
	p.eval([]byte(`[1,2]`))
	if f, _ := p.roll([]fspec{{fUnknownID, 1}, {fIDType, 1}, {fNullID, 1}, {fNotifyReply, 1}, {fBoth, 1}}, nil); f != fBoth {
		t.Errorf("picked %s, want both", f.fault())
	}
}

// TestFaultsReproducible: the same seed gives the same decisions on one
// connection, and Injected matches what the client saw.
func TestFaultsReproducible(t *testing.T) {
	run := func(seed uint64) ([]string, uint64) {
		s := newTestServer(t, Config{Seed: seed, Faults: []FaultSpec{{FaultDrop, 0.3}, {FaultDuplicate, 0.3}}})
		_, addr := serve(t, s)
		c := dial(t, addr)
		var in []string
		for i := range 300 {
			in = append(in, req(strconv.Itoa(i), "eth_chainId", ""))
		}
		c.send(in...)
		got := c.rest()
		inj := s.Injected()
		if want := 300 - inj[FaultDrop] + inj[FaultDuplicate]; uint64(len(got)) != want {
			t.Errorf("seed %d: %d lines, want %d from %v", seed, len(got), want, inj)
		}
		return got, inj[FaultDrop]
	}
	a, na := run(42)
	b, nb := run(42)
	c, _ := run(43)
	if !slices.Equal(a, b) || na != nb || na == 0 || na == 300 {
		t.Errorf("seed 42 not reproducible (%d vs %d drops)", na, nb)
	}
	if slices.Equal(a, c) {
		t.Error("seeds 42 and 43 gave identical decisions")
	}
}

// TestCloseFaultFlushesEarlierReplies replays the documented PRNG (the first
// connection uses Seed+0) to know which frame closes the connection: every
// frame before it is answered, none after it.
func TestCloseFaultFlushesEarlierReplies(t *testing.T) {
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
	s := newTestServer(t, Config{Seed: seed, Faults: []FaultSpec{{FaultClose, prob}}})
	_, addr := serve(t, s)
	c := dial(t, addr)
	var in, want []string
	for i := range n {
		in = append(in, req(strconv.Itoa(i), "eth_chainId", ""))
		if i < first {
			want = append(want, res(strconv.Itoa(i), `"0x539"`))
		}
	}
	c.send(in...)
	var got []string
	for l, ok := c.line(); ok; l, ok = c.line() {
		got = append(got, l)
	}
	if !slices.Equal(got, want) {
		t.Errorf("seed %d, close at frame %d:\ngot  %q\nwant %q", seed, first, got, want)
	}
	if got := s.Injected()[FaultClose]; got != 1 {
		t.Errorf("Injected[close] = %d", got)
	}
}
