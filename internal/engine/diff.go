package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/canonjson"
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// Defaults of DiffOptions.
const (
	DefaultDiffWorkers = 4
	DefaultDiffSamples = 5
)

// DiffOptions says how Diff sends and compares.
type DiffOptions struct {
	// Workers is how many requests are in flight at once; each worker
	// has one connection to each target. 0 means DefaultDiffWorkers.
	Workers int
	// Rate is requests per second (each sent to both targets); 0 sends
	// as fast as the workers go.
	Rate float64
	// Requests stops after this many calls; 0 stops when the config's
	// Duration has passed.
	Requests uint64
	// Ignore names the places of a reply the comparison skips (beside
	// "id" and "jsonrpc", which it always skips).
	Ignore []canonjson.Path
	// Samples is how many mismatches are kept as examples; 0 means
	// DefaultDiffSamples, a negative number none.
	Samples int
}

// envelopeOnly are the members of a response that two servers may spell
// differently without answering differently.
var envelopeOnly = func() []canonjson.Path {
	ps, err := canonjson.ParsePaths([]string{"$.id", "$.jsonrpc"})
	if err != nil {
		panic(err) // constant paths
	}
	return ps
}()

// Diff sends every request of the load cfg describes to cfg's target (A)
// and to target b, and compares the replies as canonical JSON: the whole
// response but its id and jsonrpc members, so result against result, or
// error against error (code, message, data). Requests are generated as a
// run generates them (the call picked, the params drawn from --seed and the
// sequence number; each target's profile rewrites them for its own era); a
// batch call's elements are sent one by one, and notifications and id-reuse
// probes are not sent (nothing to compare).
//
// It is a correctness run, not a benchmark: the result's requests and
// latency are target A's (each request is sent to both at the same moment,
// and latency is A's), a mismatch is the rule result_mismatch, and a
// request only one target answered is a mismatch too. cfg's rate,
// concurrency, stages and connections are not used: opt says how to send.
// The error is non-nil only when the run could not start (ErrUnreachable
// naming the target).
func Diff(ctx context.Context, cfg Config, b transport.Target, opt DiffOptions) (*stats.Result, error) {
	if opt.Workers == 0 {
		opt.Workers = DefaultDiffWorkers
	}
	if opt.Samples == 0 {
		opt.Samples = DefaultDiffSamples
	}
	switch {
	case opt.Workers < 1:
		return nil, fmt.Errorf("diff workers must be at least 1 (got %d)", opt.Workers)
	case opt.Rate < 0:
		return nil, fmt.Errorf("diff rate must not be negative (got %g)", opt.Rate)
	}
	// The load's own shape is not used: opt says how to send, for as long
	// as the stages would have lasted.
	cfg.Steady(1)
	cfg.Conns = opt.Workers // one stream connection per worker
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfgB := cfg
	cfgB.Target = b
	if err := cfgB.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.URL, err)
	}
	// Batch elements are sent one by one: no empty-batch probe either.
	cfg.Batch, cfgB.Batch = 0, 0

	d := &differ{opt: opt, cfg: &cfg}
	d.sides[0] = &diffSide{r: newExchangeRun(&cfg), label: "A"}
	d.sides[1] = &diffSide{r: newExchangeRun(&cfgB), label: "B"}
	for i, s := range d.sides {
		if err := s.start(ctx); err != nil {
			for _, o := range d.sides[:i] {
				o.close()
			}
			return nil, err
		}
	}
	names := make([]string, len(cfg.Calls))
	for i, c := range cfg.Calls {
		names[i] = c.Name
	}
	d.agg = stats.NewAggregator(names)
	d.counts = make([]stats.DiffMethod, len(cfg.Calls))
	d.ignore = append(slices.Clone(envelopeOnly), opt.Ignore...)

	startedAt := time.Now()
	first := d.sides[0].r // the pacer's lock guards its random stream
	pick := func(seq uint64) uint16 { return cfg.Pick(first.pickPCG, first.pickRand, seq) }
	d.pace = pacer{start: startedAt, rate: opt.Rate, limit: opt.Requests, duration: cfg.Duration, pick: pick}
	stopInterrupt := context.AfterFunc(ctx, func() {
		for _, s := range d.sides {
			s.interrupt()
		}
	})
	var wg sync.WaitGroup
	for lane := range opt.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); d.work(ctx, lane) }()
	}
	wg.Wait()
	stopInterrupt()
	sendingEnded := d.lastSent()
	for _, s := range d.sides {
		s.close()
	}
	return d.result(startedAt, sendingEnded, ctx.Err() != nil)
}

// differ is the state of one Diff.
type differ struct {
	opt    DiffOptions
	cfg    *Config
	sides  [2]*diffSide
	agg    *stats.Aggregator
	pace   pacer
	ignore []canonjson.Path // opt.Ignore and the envelope's members

	mu       sync.Mutex // guards the fields below
	counts   []stats.DiffMethod
	skipped  uint64
	samples  []sampleAt
	lastSend time.Time
	kept     int // violation samples offered to the aggregator
}

// sampleAt is a kept mismatch with where it stands in the run's order.
type sampleAt struct {
	seq  uint64
	elem int
	s    stats.DiffSample
}

// diffSide is one target of a diff: its connections, dialled as a run
// dials them, used one request at a time per worker.
type diffSide struct {
	r      *run
	label  string
	stream *streamDriver
	mcp    *mcpHTTPDriver
	http   *httpDriver
	mu     sync.Mutex  // guards stream.slots once workers run (a lane redials its own), and cutter
	cutter *time.Timer // closes the streams after an interrupt's grace
}

func (s *diffSide) start(ctx context.Context) error {
	r := s.r
	var err error
	switch {
	case r.cfg.Target.IsStream():
		s.stream, err = r.startStreams(ctx)
	case r.prof.Name() == profile.MCP:
		s.mcp, err = r.startMCPHTTP(ctx)
	default:
		s.http = newHTTPDriver(r)
		var c *transport.H1Conn
		if c, err = transport.DialH1(ctx, s.http.uncounted()); err == nil {
			c.Close()
		}
	}
	if err != nil {
		if errors.Is(err, ErrNoSuchTool) {
			return fmt.Errorf("target %s: %w", s.label, err)
		}
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, r.cfg.Target.URL, err)
	}
	// The era is known now: static params are rewritten for it once.
	if err := r.prepareCalls(); err != nil {
		s.close()
		return fmt.Errorf("target %s: %w", s.label, err)
	}
	return nil
}

// interrupt cuts the exchanges in progress short after the run's
// interrupt drain, as a run does.
func (s *diffSide) interrupt() {
	r := s.r
	r.interrupted.Store(true)
	grace := r.cfg.InterruptDrain
	switch {
	case s.http != nil:
		s.http.interrupt(grace)
	case s.mcp != nil:
		s.mcp.interrupt(grace)
	default:
		s.mu.Lock()
		defer s.mu.Unlock()
		s.cutter = time.AfterFunc(grace, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, sc := range s.stream.slots {
				sc.st.Close()
			}
		})
	}
}

func (s *diffSide) close() {
	switch {
	case s.http != nil:
		s.http.close()
	case s.mcp != nil:
		s.mcp.close()
	case s.stream != nil:
		s.mu.Lock()
		if s.cutter != nil {
			s.cutter.Stop()
		}
		s.mu.Unlock()
		s.stream.close()
	}
}

// errChildGone is an exchange on a child process that exited when
// --restart was not given.
var errChildGone = errors.New("the child process exited (give --restart to start another)")

// exchange sends one request on the worker's connection and returns the
// reply frame (over HTTP, the body, whatever its status).
func (s *diffSide) exchange(lane *diffLane, seq uint64, method string, params []byte) ([]byte, error) {
	r := s.r
	switch {
	case s.stream != nil:
		sc, err := s.conn(lane.index)
		if err != nil {
			return nil, err
		}
		return sc.sess.call(method, params)
	case s.mcp != nil:
		ctx, cancel := context.WithTimeout(s.mcp.stop, r.cfg.Timeout)
		defer cancel()
		body := profile.Step{Method: method, Params: params}.Append(nil, seq, r.cfg.IDFormat)
		status, _, msgs, err := s.mcp.exchange(ctx, s.mcp.headers(r.era, method, params), body, nil)
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			return nil, fmt.Errorf("no JSON-RPC response (HTTP status %d)", status)
		}
		return lastResponse(msgs), nil
	default:
		lane.body = profile.Step{Method: method, Params: params}.Append(lane.body[:0], seq, r.cfg.IDFormat)
		reply, err := lane.post.post(lane.body, nil, r.now())
		var se *transport.StatusError
		if errors.As(err, &se) && len(bytes.TrimSpace(reply)) > 0 {
			err = nil // an error status with a body: the body is the reply
		}
		if err == nil && len(bytes.TrimSpace(reply)) == 0 {
			err = errors.New("empty reply body")
		}
		return reply, err
	}
}

// conn returns lane i's stream connection, dialled again (with its
// handshake) if the last one ended.
func (s *diffSide) conn(i int) (*streamConn, error) {
	s.mu.Lock()
	sc := s.stream.slots[i]
	s.mu.Unlock()
	select {
	case <-sc.readerDone:
	default:
		return sc, nil
	}
	r := s.r
	switch {
	case r.interrupted.Load():
		return nil, context.Canceled
	case sc.child != nil && !r.cfg.Restart:
		return nil, errChildGone
	}
	sc.sess.stop()
	sc.st.Close()
	if sc.child != nil {
		r.childGone(sc.child, false)
	}
	fresh, err := s.stream.dial(context.Background(), i)
	if err != nil {
		return nil, fmt.Errorf("connecting again: %w", err)
	}
	s.mu.Lock()
	s.stream.slots[i] = fresh
	s.mu.Unlock()
	return fresh, nil
}

// diffLane is what one worker keeps per target.
type diffLane struct {
	index int
	gen   *paramGen
	post  *poster // plain HTTP
	body  []byte
}

// pacer hands out sequence numbers, their calls and their intended send
// times, one at a time in order.
type pacer struct {
	mu       sync.Mutex
	seq      uint64
	start    time.Time
	rate     float64 // 0: no schedule
	limit    uint64  // 0: until duration
	duration time.Duration
	stopped  bool
	pick     func(seq uint64) uint16
}

// next returns the next call, or ok false when the run is over.
func (p *pacer) next() (seq uint64, call uint16, intended time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || (p.limit > 0 && p.seq >= p.limit) {
		return 0, 0, time.Time{}, false
	}
	intended = time.Now()
	if p.rate > 0 {
		intended = p.start.Add(time.Duration(float64(p.seq) / p.rate * float64(time.Second)))
	}
	if p.limit == 0 && intended.Sub(p.start) >= p.duration {
		return 0, 0, time.Time{}, false
	}
	p.seq++
	return p.seq, p.pick(p.seq), intended, true
}

// stop ends the run early (a call's data ran out).
func (p *pacer) stop() { p.mu.Lock(); p.stopped = true; p.mu.Unlock() }

// work is one worker: it takes calls in turn and compares each of their
// requests on its own connections to A and B.
func (d *differ) work(ctx context.Context, index int) {
	rec := d.agg.NewRecorder()
	var lanes [2]diffLane
	for i, s := range d.sides {
		lanes[i] = diffLane{index: index, gen: s.r.newParamGen()}
		if s.http != nil {
			lanes[i].post = &poster{d: s.http}
			defer lanes[i].post.close()
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		seq, ci, intended, ok := d.pace.next()
		if !ok {
			return
		}
		if wait := time.Until(intended); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		var elems [2][][]byte
		for i, s := range d.sides {
			var err error
			if elems[i], ok, err = s.r.tickParams(lanes[i].gen, &s.r.calls[ci], seq); !ok {
				if err != nil {
					s.r.noteTransportError(err)
				}
				d.pace.stop() // the call's data ran out: the run stops sending
				return
			}
		}
		c := &d.sides[0].r.calls[ci]
		first := (seq-1)*uint64(c.weight) + 1
		for k := range elems[0] {
			if c.IDReuse || d.sides[0].r.cfg.Notification(&c.Call, first+uint64(k)) {
				d.mu.Lock()
				d.skipped++
				d.mu.Unlock()
				continue
			}
			if ctx.Err() != nil && k > 0 {
				return
			}
			d.compare(rec, &lanes, seq, k, ci, intended, elems[0][k], elems[1][k])
		}
	}
}

// tickParams returns the params of every element of call c's tick seq, as
// encodeTick draws them (copies: the generator's buffer is reused).
func (r *run) tickParams(g *paramGen, c *callState, seq uint64) ([][]byte, bool, error) {
	params, ok, err := r.callParams(g, c, seq)
	if !ok {
		return nil, false, err
	}
	elems := [][]byte{slices.Clone(params)}
	for range c.weight - 1 {
		if !c.isStatic {
			g.buf, _ = c.Params.Append(g.buf[:0], g.rnd, seq)
			params = g.buf
			if r.rewrites {
				if params, err = r.prof.Params(r.era, c.Method, g.buf); err != nil {
					return nil, false, err
				}
			}
		}
		elems = append(elems, slices.Clone(params))
	}
	return elems, true, nil
}

// reply is one target's answer to one request.
type reply struct {
	frame []byte
	err   error
}

// compare sends one request to both targets at once, records A's outcome
// and compares the replies.
func (d *differ) compare(rec *stats.Recorder, lanes *[2]diffLane, seq uint64, elem int, ci uint16, intended time.Time, pa, pb []byte) {
	a, b := d.sides[0], d.sides[1]
	method := a.r.calls[ci].Method
	var rb reply
	done := make(chan struct{})
	go func() {
		defer close(done)
		rb.frame, rb.err = b.exchange(&lanes[1], seq, method, pb)
	}()
	sent := time.Now()
	var ra reply
	ra.frame, ra.err = a.exchange(&lanes[0], seq, method, pa)
	answered := time.Now()
	<-done

	d.mu.Lock()
	d.lastSend = maxTime(d.lastSend, sent)
	d.mu.Unlock()
	rec.Record(stats.Sample{Kind: stats.MessageSent, Method: ci})
	rec.Record(stats.Sample{Kind: stats.Sent, Method: ci, A: int64(sent.Sub(intended))})
	d.recordA(rec, ci, ra, answered.Sub(intended), answered.Sub(sent))
	if rb.err != nil {
		b.note(rb.err)
	}

	var paths []string
	switch {
	case ra.err != nil && rb.err != nil:
		d.mu.Lock()
		d.counts[ci].Unanswered++
		d.mu.Unlock()
		return
	case ra.err != nil || rb.err != nil:
		paths = []string{"$"}
	default:
		paths = d.differences(ra.frame, rb.frame)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.counts[ci].Compared++
	if len(paths) == 0 {
		return
	}
	d.counts[ci].Mismatches++
	rec.Record(stats.Sample{Kind: stats.Violation, Rule: check.ResultMismatch, Method: ci})
	if d.kept < stats.MaxSamplesPerRule {
		d.kept++
		d.agg.KeepSample(check.ResultMismatch, int(ci), rb.frame, fmt.Sprintf("call %d: target B differs from A at %s", seq, firstPaths(paths, 5)))
	}
	d.keep(sampleAt{seq: seq, elem: elem, s: stats.DiffSample{
		Method: a.r.calls[ci].Name, Seq: seq,
		Request: cut(profile.Step{Method: method, Params: pa}.Append(nil, seq, a.r.cfg.IDFormat)),
		A:       replyText(ra), B: replyText(rb),
	}}, paths)
}

// differences compares two reply frames outside the ignored places. A
// frame that is not JSON equals only the same bytes.
func (d *differ) differences(a, b []byte) []string {
	paths, err := canonjson.Diff(a, b, d.ignore)
	if err != nil {
		if bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) {
			return nil
		}
		return []string{"$"}
	}
	return paths
}

// recordA counts A's outcome as a run would.
func (d *differ) recordA(rec *stats.Recorder, ci uint16, ra reply, corrected, service time.Duration) {
	a := d.sides[0]
	if ra.err != nil {
		kind := stats.TransportError
		switch {
		case a.r.interrupted.Load() && !isTimeout(ra.err):
			kind = stats.Leaked // cut short by the interrupt
		case isTimeout(ra.err):
			kind = stats.Timeout
		default:
			a.note(ra.err)
		}
		rec.Record(stats.Sample{Kind: kind, Method: ci})
		return
	}
	var m wire.Message
	wire.Scan(ra.frame, &m)
	s := stats.Sample{Kind: stats.InvalidReply, Method: ci, A: int64(corrected), B: int64(service)}
	switch m.Kind {
	case wire.KindResult:
		s.Kind = stats.OK
	case wire.KindError:
		s.Kind, s.Code = stats.RPCError, m.Code
	}
	rec.Record(s)
}

func isTimeout(err error) bool {
	return errors.Is(err, errStepTimeout) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
}

// note keeps a failed exchange's error for the report.
func (s *diffSide) note(err error) {
	if !isTimeout(err) {
		s.r.noteTransportError(err)
	}
}

// keep adds a sample if it is among the first opt.Samples mismatches in
// the run's order (sequence number, then element), so the samples do not
// depend on which worker was faster.
func (d *differ) keep(x sampleAt, paths []string) {
	if d.opt.Samples < 0 {
		return
	}
	before := func(p, q sampleAt) bool { return p.seq < q.seq || p.seq == q.seq && p.elem < q.elem }
	if len(d.samples) >= d.opt.Samples {
		last := len(d.samples) - 1
		if !before(x, d.samples[last]) {
			return
		}
		d.samples = d.samples[:last]
	}
	const maxPaths = 20
	x.s.Paths = paths[:min(len(paths), maxPaths)]
	x.s.MorePaths = len(paths) - len(x.s.Paths)
	i, _ := slices.BinarySearchFunc(d.samples, x, func(p, q sampleAt) int {
		if before(p, q) {
			return -1
		}
		return 1
	})
	d.samples = slices.Insert(d.samples, i, x)
}

func (d *differ) lastSent() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastSend
}

// result assembles the diff's result: A's requests and latency, the
// mismatches as violations, the diff report.
func (d *differ) result(startedAt, sendingEnded time.Time, interrupted bool) (*stats.Result, error) {
	a, b := d.sides[0], d.sides[1]
	res := &stats.Result{
		Tool: "rpcload", Target: a.r.cfg.Target.URL + " vs " + b.r.cfg.Target.URL,
		StartedAt: startedAt.UTC().Format(time.RFC3339Nano), Interrupted: interrupted,
	}
	if sendingEnded.After(startedAt) {
		res.DurationS = sendingEnded.Sub(startedAt).Seconds()
	}
	if err := d.agg.Fill(res); err != nil {
		return nil, err
	}
	res.Rate.Target = d.opt.Rate
	res.SetAchieved()
	report := &stats.DiffReport{
		Targets: []string{a.r.cfg.Target.URL, b.r.cfg.Target.URL}, IgnorePaths: []string{},
		Skipped: d.skipped, Methods: map[string]stats.DiffMethod{}, Samples: []stats.DiffSample{},
	}
	for _, p := range d.opt.Ignore {
		report.IgnorePaths = append(report.IgnorePaths, p.String())
	}
	for i, c := range d.counts {
		report.Compared += c.Compared
		report.Mismatches += c.Mismatches
		report.Unanswered += c.Unanswered
		if c != (stats.DiffMethod{}) {
			report.Methods[a.r.calls[i].Name] = c
		}
	}
	for _, s := range d.samples {
		report.Samples = append(report.Samples, s.s)
	}
	res.Diff = report
	res.TransportErrorSamples = []string{}
	for _, s := range d.sides {
		s.r.errMu.Lock()
		for _, e := range s.r.errSample {
			res.TransportErrorSamples = append(res.TransportErrorSamples, s.label+": "+e)
		}
		s.r.errMu.Unlock()
	}
	res.Connections = stats.Connections{Opened: a.r.connsOpened.Load() + b.r.connsOpened.Load()}
	res.Child = a.r.childReport()
	res.Profile = a.r.profileReport()
	res.Warnings = warnings(res)
	for _, cfg := range []*Config{a.r.cfg, b.r.cfg} {
		if w := insecureWarning(cfg); w != "" {
			res.Warnings = append(res.Warnings, cfg.Target.URL+": "+w)
		}
	}
	return res, nil
}

// maxSampleText bounds each text of a sample.
const maxSampleText = 2048

func cut(b []byte) string {
	if len(b) <= maxSampleText {
		return string(b)
	}
	return fmt.Sprintf("%s... (%d bytes)", b[:maxSampleText], len(b))
}

func replyText(r reply) string {
	if r.err != nil {
		return "(no reply: " + r.err.Error() + ")"
	}
	return cut(r.frame)
}

func firstPaths(paths []string, n int) string {
	s := fmt.Sprint(paths[:min(len(paths), n)])
	if len(paths) > n {
		s += fmt.Sprintf(" and %d more", len(paths)-n)
	}
	return s
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
