package stats

// CapacityReport is what `rpcload capacity` found: the service-level
// objective every step was judged against, each step it ran in order, and
// the answer. The result that carries it is the run of the last confirming
// step (or of the last step, when none confirmed), so compare, check and
// report read it as any result.
type CapacityReport struct {
	// SLO holds the conditions a step must meet, as threshold expressions
	// (--slo and --max-error-rate as written, e.g. "p99<20ms").
	SLO []string `json:"slo"`
	// LatencyLimitUs is the tightest latency bound of the SLO: the stop
	// rule and the load generator's lag are measured against it.
	LatencyLimitUs int64          `json:"latency_limit_us"`
	StartRate      float64        `json:"start_rate"`
	MaxRate        float64        `json:"max_rate"`  // the search never offers more (0: no bound)
	Growth         float64        `json:"growth"`    // factor between the growing steps
	Precision      float64        `json:"precision"` // the bisection stops when (first bad − last good) / last good is below it
	StepS          float64        `json:"step_s"`    // measured length of a step
	WarmupS        float64        `json:"warmup_s"`  // warm-up before each step's measured part
	ConfirmS       float64        `json:"confirm_s"` // measured length of the confirming run
	Unit           string         `json:"unit"`      // what a rate counts: req/s, batches/s or msg/s
	Steps          []CapacityStep `json:"steps"`
	// Rate is the answer: the highest offered rate that met the SLO, per
	// second; 0 when even the start rate broke it.
	Rate float64 `json:"rate"`
	// Confirmed says a confirming run at Rate met the SLO too.
	Confirmed bool `json:"confirmed"`
	// LimitedBy names what ended the search: "server" (a step at a higher
	// rate broke the SLO because of the server), "load_generator",
	// "machine" or "connections" (the failure was not the server's, so
	// Rate is only a lower bound of what the server sustains), "max_rate"
	// (the search reached MaxRate without a failure), or "interrupted".
	LimitedBy string `json:"limited_by"`
	// Verdict is the answer in one sentence, as the report prints it.
	Verdict string `json:"verdict"`
}

// CapacityStep is one run of the search at one offered rate.
type CapacityStep struct {
	Phase    string  `json:"phase"`    // grow, bisect or confirm
	Offered  float64 `json:"offered"`  // the open loop's rate, per second
	Achieved float64 `json:"achieved"` // messages written per second of the measured part
	// DurationS is the measured part's length: shorter than asked when the
	// stop rule ended the step (StoppedEarly) or the run was interrupted.
	DurationS float64 `json:"duration_s"`
	Sent      uint64  `json:"sent"`
	Answered  uint64  `json:"answered"`
	// Errors counts rpc errors, invalid replies, transport errors,
	// timeouts and leaked requests; ErrorRate is Errors / Sent.
	Errors     uint64  `json:"errors"`
	ErrorRate  float64 `json:"error_rate"`
	Violations uint64  `json:"violations"` // broken rules, warnings excluded
	Dropped    uint64  `json:"dropped"`    // ticks not sent: --max-inflight was reached
	// Latency is the corrected latency of the measured part, with its HDR
	// histogram; ServiceP99us and LagP99us tell the server's share of it
	// from the load generator's.
	Latency      Latency `json:"latency"`
	ServiceP50us int64   `json:"service_p50_us"`
	ServiceP99us int64   `json:"service_p99_us"`
	LagP99us     int64   `json:"lag_p99_us"`
	InFlightMax  int64   `json:"inflight_max"`
	// StoppedEarly says why the stop rule ended the step before its
	// length ("" when it ran to the end).
	StoppedEarly string `json:"stopped_early,omitempty"`
	// ClientCPU is the CPU time rpcload's own process used per second of
	// the step, in cores; MachineBusy the share of the machine's CPU time
	// that was busy (0..1), or -1 where it cannot be read.
	ClientCPU   float64 `json:"client_cpu"`
	MachineBusy float64 `json:"machine_busy"`
	Pass        bool    `json:"pass"`
	// Blame is whose failure it was when the step failed: "server",
	// "load_generator", "machine" or "connections"; "" when it passed.
	Blame string `json:"blame,omitempty"`
	// Reasons says in words what failed (or, for a step that passed, is
	// empty).
	Reasons []string `json:"reasons,omitempty"`
	// SLO holds the step's verdict on each SLO condition, in order.
	SLO []ThresholdVerdict `json:"slo_verdicts"`
}
