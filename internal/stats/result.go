package stats

import (
	"sort"
	"strconv"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/check"
)

// Schema is the version tag of the result file format.
const Schema = "rpcload.result/v1"

// Requests counts how requests ended. Answered = OK + RPCErrors + InvalidReplies.
type Requests struct {
	Sent            uint64 `json:"sent"`
	Notifications   uint64 `json:"notifications"`
	Answered        uint64 `json:"answered"`
	OK              uint64 `json:"ok"`
	RPCErrors       uint64 `json:"rpc_errors"`
	InvalidReplies  uint64 `json:"invalid_replies"`
	TransportErrors uint64 `json:"transport_errors"`
	Timeouts        uint64 `json:"timeouts"`
	Late            uint64 `json:"late"`
	Leaked          uint64 `json:"leaked"`
	Dropped         uint64 `json:"dropped"`
	ServerMessages  uint64 `json:"server_messages"`
	Messages        uint64 `json:"messages"` // messages written: requests, notifications, batches
	Batches         uint64 `json:"batches"`  // the messages that were batches (each also in Messages; its elements in Sent and Notifications)
	// Diverted counts the scheduled calls taken off the load as malformed
	// traffic (--mutate-fraction): in none of the counts above.
	Diverted uint64 `json:"diverted,omitempty"`
}

// Latency summarises one histogram (microseconds) and carries the histogram
// itself in HdrHistogram's compressed base64 form, so results merge exactly.
type Latency struct {
	Count  int64   `json:"count"`
	MinUs  int64   `json:"min_us"`
	MeanUs float64 `json:"mean_us"`
	P50us  int64   `json:"p50_us"`
	P90us  int64   `json:"p90_us"`
	P95us  int64   `json:"p95_us"`
	P99us  int64   `json:"p99_us"`
	P999us int64   `json:"p999_us"`
	MaxUs  int64   `json:"max_us"`
	HDR    string  `json:"hdr"`
}

// LatencySet is the three histograms kept per method and overall.
type LatencySet struct {
	Corrected Latency `json:"corrected"` // reply time - intended send time
	Service   Latency `json:"service"`   // reply time - actual write
	Lag       Latency `json:"lag"`       // actual write - intended send time
}

// MethodResult is the part of a result that is kept per method.
type MethodResult struct {
	Requests   Requests          `json:"requests"`
	Violations map[string]uint64 `json:"violations"`
	ErrorCodes map[string]uint64 `json:"error_codes"`
	Latency    LatencySet        `json:"latency"`
}

// Rate compares the schedule with what was sent. The schedule counts
// messages, a batch being one, so Target and Achieved do too; with batches
// the requests written per second are Requests, apart.
type Rate struct {
	Target   float64 `json:"target"`   // messages per second asked for (0 in closed loop)
	Achieved float64 `json:"achieved"` // messages written per second of the sending phase (a batch is one message)
	// Requests is the requests and notifications written per second of the
	// sending phase, every element of a batch counted.
	Requests float64 `json:"requests"`
}

// SetAchieved computes the achieved rates from the counts and the length
// of the sending phase.
func (r *Result) SetAchieved() {
	r.Rate.Achieved, r.Rate.Requests = 0, 0
	if r.DurationS > 0 {
		r.Rate.Achieved = float64(r.Requests.Messages) / r.DurationS
		r.Rate.Requests = float64(r.Requests.Sent+r.Requests.Notifications) / r.DurationS
	}
}

// RateUnit names what a rate of messages counts: "req/s" when no batch was
// sent (a message is one request or notification), "batches/s" when every
// message was a batch, "msg/s" for a mix of both.
func RateUnit(messages, batches uint64) string {
	switch {
	case batches == 0:
		return "req/s"
	case batches == messages:
		return "batches/s"
	default:
		return "msg/s"
	}
}

// Connections counts the connections (or child processes) of a run.
type Connections struct {
	Opened int64 `json:"opened"`
	Lost   int64 `json:"lost"` // ended by the server (or the child's exit) before the run did
}

// ChildReport describes the server processes rpcload started (stdio targets).
type ChildReport struct {
	Command    string   `json:"command"`
	Restarts   int64    `json:"restarts"`
	Exits      []string `json:"exits"`       // how each child ended, with its time in the run
	StderrPath string   `json:"stderr_path"` // where the children's stderr was written ("" = not kept)
	StderrTail []string `json:"stderr_tail"` // the last lines of the last child's stderr
}

// ProfileReport describes what the --profile layer did on top of JSON-RPC.
type ProfileReport struct {
	Name       string `json:"name"`              // jsonrpc, mcp, lsp or eth
	Era        string `json:"era,omitempty"`     // mcp: "modern" or "legacy", as detected or forced
	Version    string `json:"version,omitempty"` // mcp: the revision spoken (the server's choice in a legacy era)
	Handshakes int64  `json:"handshakes"`        // connections that completed the profile's handshake (or era probe)
	// ServerRequestsAnswered counts requests from the server that rpcload
	// answered (LSP's workspace/configuration, MCP's ping, ...); they are
	// also in requests.server_messages and server_methods.
	ServerRequestsAnswered int64    `json:"server_requests_answered"`
	CancelsSent            int64    `json:"cancels_sent"`    // cancellation notifications sent after timeouts
	Tools                  []string `json:"tools,omitempty"` // mcp with --tool: the tools the server listed
}

// IDReuseReport is what the id-reuse probe found: requests sent with the id
// of a request still in flight on the same connection. None of it counts
// against the load.
type IDReuseReport struct {
	Probes       int64            `json:"probes"`          // probes sent
	NoIDInFlight int64            `json:"no_id_in_flight"` // probe calls not sent: no request was in flight to take the id of
	BothAnswered int64            `json:"both_answered"`   // the id got two replies (or more)
	OneReply     int64            `json:"one_reply"`       // the id got one reply for two requests
	NoReply      int64            `json:"no_reply"`        // the id got none by the end
	ErrorCodes   map[string]int64 `json:"error_codes"`     // codes of the error replies the probes drew
}

// Result is everything a run measured. Renderers print it; the JSON form is
// the result file.
type Result struct {
	Schema           string                   `json:"schema"`
	Tool             string                   `json:"tool"`
	Target           string                   `json:"target"`
	StartedAt        string                   `json:"started_at"`
	DurationS        float64                  `json:"duration_s"` // length of the sending phase
	DrainS           float64                  `json:"drain_s"`    // time spent waiting for replies after sending stopped
	Settings         map[string]any           `json:"settings"`
	Rate             Rate                     `json:"rate"`
	InFlightMax      int64                    `json:"inflight_max"`
	Requests         Requests                 `json:"requests"`
	Violations       map[string]uint64        `json:"violations"`
	ViolationSamples map[string][]FrameSample `json:"violation_samples"`
	ErrorCodes       map[string]uint64        `json:"error_codes"`
	// ErrorMessages keeps the first distinct error messages seen per error
	// code (a few per code, each cut to 512 bytes), as the server wrote them.
	ErrorMessages map[string][]string     `json:"error_messages,omitempty"`
	ServerMethods map[string]uint64       `json:"server_methods"` // requests and notifications the server sent, by method
	Latency       LatencySet              `json:"latency"`
	ClampedValues uint64                  `json:"clamped_values"`
	Methods       map[string]MethodResult `json:"methods"`
	Series        []Point                 `json:"series"`
	Warnings      []string                `json:"warnings"`
	Interrupted   bool                    `json:"interrupted"`
	// EndedEarly says why sending stopped before the planned end when the
	// run could not go on (every child process exited without --restart,
	// replies the profile cannot read); "" otherwise. It fails the run.
	EndedEarly            string             `json:"ended_early,omitempty"`
	Connections           Connections        `json:"connections"`
	Child                 *ChildReport       `json:"child,omitempty"`
	Profile               *ProfileReport     `json:"profile,omitempty"`
	IDReuse               *IDReuseReport     `json:"id_reuse,omitempty"`
	TransportErrorSamples []string           `json:"transport_error_samples"`
	Thresholds            []ThresholdVerdict `json:"thresholds,omitempty"` // --threshold verdicts, in the order given
	Soak                  *SoakReport        `json:"soak,omitempty"`       // --soak: growth fits and the verdict
	Shard                 *ShardInfo         `json:"shard,omitempty"`      // --shard i/n: this result is one shard's
	MergedFrom            []MergedPart       `json:"merged_from,omitempty"`
	// Partial marks a merge without some of its run's shards.
	Partial *Partial      `json:"partial,omitempty"`
	Rounds  *RoundsReport `json:"rounds,omitempty"` // --target A --target B --rounds N
	Diff    *DiffReport   `json:"diff,omitempty"`   // --diff: results compared between two targets
	// Warmup is the part of the sending phase before the measured one,
	// when the run had one: the requests scheduled in it are counted
	// here, not in the figures above (the time series shows them).
	Warmup   *Warmup         `json:"warmup,omitempty"`
	Capacity *CapacityReport `json:"capacity,omitempty"` // rpcload capacity: the search, its steps and its answer
	// Malformed is the malformed traffic mixed into the load
	// (--mutate-fraction), judged apart from it.
	Malformed *MalformedReport `json:"malformed,omitempty"`
	// API is how much of the target's API an rpcfuzz run reached (its
	// latency.json): nil when no API was known.
	API *APICoverage `json:"api,omitempty"`
	// Quiet is the phase after the load in which the run went on
	// sampling with nothing sent (--soak-quiet); its points end the
	// series.
	Quiet *QuietPhase `json:"quiet,omitempty"`
	// ServerGauges says where the server's own gauges in the series
	// (Point.Server) were read from, and how often that failed.
	ServerGauges *ServerGauges `json:"server_gauges,omitempty"`
}

// Warmup is a run's warm-up: its length and what its requests came to.
type Warmup struct {
	DurationS float64  `json:"duration_s"`
	Requests  Requests `json:"requests"`
}

// FailingViolations counts the broken rules of v (by rule name) that fail
// a run: all but the warnings (check.Rule.Warning), which reports list all
// the same. Names the running rpcload does not know still count: a result
// file from a newer version must not pass for that reason.
func FailingViolations(v map[string]uint64) uint64 {
	var n uint64
	for name, count := range v {
		if rule, ok := check.ParseRule(name); ok && rule.Warning() {
			continue
		}
		n += count
	}
	return n
}

// Fill writes the aggregated figures into r (counts, latencies, per method,
// series); the caller fills in the run's identity and settings.
func (a *Aggregator) Fill(r *Result) error {
	a.Flush()
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	r.Schema = Schema
	r.Requests, r.Violations, r.ErrorCodes = counts(a.total)
	if r.Latency, err = latencySet(a.totalHists()); err != nil {
		return err
	}
	r.Methods = map[string]MethodResult{}
	for i, ms := range a.per {
		if ms.counts == ([numKinds]uint64{}) {
			continue
		}
		var mr MethodResult
		mr.Requests, mr.Violations, mr.ErrorCodes = counts(ms)
		if mr.Latency, err = latencySet(ms); err != nil {
			return err
		}
		r.Methods[a.methodName(i)] = mr
	}
	r.ViolationSamples = map[string][]FrameSample{}
	for rule, s := range a.samples {
		r.ViolationSamples[rule.String()] = append([]FrameSample(nil), s...)
	}
	r.Series = append([]Point(nil), a.series...)
	r.ServerMethods = map[string]uint64{}
	for k, n := range a.srvMeth {
		r.ServerMethods[k] = n
	}
	r.ClampedValues = a.clamped
	if len(a.errMsgs) > 0 {
		r.ErrorMessages = map[string][]string{}
		for code, msgs := range a.errMsgs {
			r.ErrorMessages[strconv.FormatInt(code, 10)] = append([]string(nil), msgs...)
		}
	}
	return nil
}

func counts(ms *methodStats) (Requests, map[string]uint64, map[string]uint64) {
	c := &ms.counts
	q := Requests{
		Sent: c[Sent], Notifications: c[NotifySent], Answered: c[OK] + c[RPCError] + c[InvalidReply], OK: c[OK], RPCErrors: c[RPCError], InvalidReplies: c[InvalidReply],
		TransportErrors: c[TransportError], Timeouts: c[Timeout], Late: c[Late], Leaked: c[Leaked],
		Dropped: c[Dropped], ServerMessages: c[ServerMessage], Messages: c[MessageSent], Batches: c[BatchSent],
	}
	v := map[string]uint64{}
	for i, n := range ms.rules {
		if n > 0 {
			v[check.Rule(i).String()] = n
		}
	}
	codes := map[string]uint64{}
	for code, n := range ms.codes {
		codes[strconv.FormatInt(code, 10)] = n
	}
	return q, v, codes
}

func latencySet(ms *methodStats) (LatencySet, error) {
	var s LatencySet
	var err error
	if s.Corrected, err = summarize(ms.corrected); err != nil {
		return s, err
	}
	if s.Service, err = summarize(ms.service); err != nil {
		return s, err
	}
	s.Lag, err = summarize(ms.lag)
	return s, err
}

// summarize reads percentiles off h. Each reported value is the highest
// value equivalent to the recorded one at three significant digits, the
// HdrHistogram convention, so a percentile never understates.
func summarize(h *hdr.Histogram) (Latency, error) {
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return Latency{}, err
	}
	return Latency{
		Count: h.TotalCount(), MinUs: h.Min(), MeanUs: h.Mean(),
		P50us: h.ValueAtQuantile(50), P90us: h.ValueAtQuantile(90), P95us: h.ValueAtQuantile(95), P99us: h.ValueAtQuantile(99),
		P999us: h.ValueAtQuantile(99.9), MaxUs: h.Max(), HDR: string(enc),
	}, nil
}

// SortedKeys returns m's keys in order, for stable printing.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
