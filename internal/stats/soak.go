package stats

// SoakReport is what a soak run concludes from its time series: straight
// lines fitted to the server child's RSS and to the pending counts, and a
// verdict on whether either grew steadily.
type SoakReport struct {
	IntervalS float64 `json:"interval_s"`
	Points    int     `json:"points"`
	// Each Growth is a least-squares slope per hour with the fit's R²; a
	// figure that was never measured (no child process) is nil.
	ChildRSS           *Growth `json:"child_rss,omitempty"`            // bytes per hour
	InFlight           *Growth `json:"inflight,omitempty"`             // requests per hour
	OldestPending      *Growth `json:"oldest_pending,omitempty"`       // microseconds per hour
	TimedOutUnanswered *Growth `json:"timed_out_unanswered,omitempty"` // requests per hour
	// WarmupPoints is how many points at the start were left out of the
	// fits as warm-up (connections, caches and pools filling).
	WarmupPoints int    `json:"warmup_points"`
	Verdict      string `json:"verdict"` // one line, for people
	// Grew is true when any figure above grew steadily: memory, the
	// requests in flight or never answered, or the age of the oldest one.
	Grew       bool   `json:"grew"`
	HlogPath   string `json:"hlog_path,omitempty"`
	SeriesPath string `json:"series_path,omitempty"`
	// Gauges are the server's gauges (its children's RSS, threads and
	// open files; --server-pid's; --server-metrics'), each fitted against
	// the requests the server settled and against time, with a verdict of
	// its own (see soak.Analyze). ChildRSS above is child_rss_bytes' time
	// fit, kept for readers of older files.
	Gauges []GaugeGrowth `json:"gauges,omitempty"`
	// Finding sums the gauges up: "leak", "steady growth" (no quiet phase
	// to tell a leak from a backlog), "backlog/cache" or "no steady
	// growth", in that order of precedence; "too short" when no gauge
	// could be judged; "" without gauges.
	Finding string `json:"finding,omitempty"`
	// Leaks counts the gauges judged a leak.
	Leaks int `json:"leaks"`
}

// The verdicts of a gauge (GaugeGrowth.Verdict) and of a soak's gauges
// together (SoakReport.Finding).
const (
	VerdictLeak         = "leak"
	VerdictSteadyGrowth = "steady growth"
	VerdictBacklogCache = "backlog/cache"
	VerdictNoGrowth     = "no steady growth"
	VerdictTooShort     = "too short"
)

// GaugeGrowth is what a soak concludes of one of the server's gauges.
type GaugeGrowth struct {
	Name string `json:"name"` // child_rss_bytes, proc_threads, go_goroutines, http_in_flight{handler="/rpc"}
	Unit string `json:"unit"` // "bytes", or "" for a count or any other number
	// Points is how many of the load's points after the warm-up had it.
	Points int `json:"points"`
	// PerHour is the line fitted against time (the gauge's unit per hour).
	PerHour *Growth `json:"per_hour,omitempty"`
	// PerRequest is the line fitted against the requests settled so far.
	PerRequest *RequestGrowth `json:"per_request,omitempty"`
	// Plateau is true when the gauge rose and then stopped rising while
	// the load went on: a cache or pool that filled.
	Plateau bool `json:"plateau"`
	// Quiet is what the gauge did once the load had stopped.
	Quiet *QuietChange `json:"quiet,omitempty"`
	// ShortestRunS is the shortest run at this rate and interval that
	// would have shown the growth (warm-up included, quiet phase not),
	// and ShortestRequests the requests it sends; 0 when the gauge did
	// not grow steadily.
	ShortestRunS     float64 `json:"shortest_run_s,omitempty"`
	ShortestRequests float64 `json:"shortest_requests,omitempty"`
	Verdict          string  `json:"verdict"` // one of the Verdict constants
	Line             string  `json:"line"`    // the verdict for people, one line
}

// RequestGrowth is a gauge fitted against the requests the server settled
// (answered, timed out or lost).
type RequestGrowth struct {
	Slope    float64 `json:"slope"`  // the gauge's unit per request
	StdErr   float64 `json:"stderr"` // the slope's standard error
	R2       float64 `json:"r2"`
	Requests float64 `json:"requests"` // settled between the first and last point fitted
	First    float64 `json:"first"`    // the fitted value at the first point
	Last     float64 `json:"last"`     // the fitted value at the last point
	// Fates split the slope by how requests ended (ok, error, timed_out,
	// lost), when the run can tell them apart; FateNote says why not
	// when it cannot.
	Fates    []FateGrowth `json:"fates,omitempty"`
	FateNote string       `json:"fate_note,omitempty"`
}

// FateGrowth is the growth per request of one fate, from a regression of
// the gauge on the cumulative counts of every fate.
type FateGrowth struct {
	Fate     string  `json:"fate"`
	Requests float64 `json:"requests"` // of this fate over the fitted points
	Slope    float64 `json:"slope"`
	StdErr   float64 `json:"stderr"`
}

// QuietChange is what a gauge did in the quiet phase.
type QuietChange struct {
	Points int     `json:"points"`
	End    float64 `json:"end"`   // the fitted value at the load's last point
	Level  float64 `json:"level"` // its level in the quiet phase (the median of its points after the first)
	// Kept is the share of the load's growth still there in the quiet
	// phase (1: all of it, 0: back where it started); nil when the gauge
	// did not grow.
	Kept *float64 `json:"kept,omitempty"`
}

// Growth is a straight line fitted to one figure over the run.
type Growth struct {
	PerHour float64 `json:"per_hour"`
	R2      float64 `json:"r2"`
	First   float64 `json:"first"` // the fitted value at the first point
	Last    float64 `json:"last"`  // the fitted value at the last point
	// Grew is true when the line fits well and rises over the run by more
	// than the figure's noise floor (see soak.Analyze).
	Grew bool `json:"grew"`
}

// QuietPhase is when a run sampled without sending: on the series' time
// axis (seconds since the run clock started), from StartS for DurationS.
type QuietPhase struct {
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	// Cut is true when an interrupt ended the phase before its time.
	Cut bool `json:"cut,omitempty"`
}

// ServerGauges says where a run read the server's own gauges
// (--server-metrics, --server-metric, --server-pid) and how that went.
type ServerGauges struct {
	Sources []string `json:"sources"` // each endpoint's URL (password hidden), "pid N"
	Gauges  []string `json:"gauges"`  // the gauges read at least once
	// Reads counts the reads, one per source and interval; Failures those
	// that failed (a scrape that timed out or could not be parsed, a
	// process that was gone), with the first few messages in Errors.
	Reads    uint64   `json:"reads"`
	Failures uint64   `json:"failures"`
	Errors   []string `json:"errors,omitempty"`
	// Missing are gauges asked for with --server-metric that no endpoint
	// ever exposed.
	Missing []string `json:"missing,omitempty"`
}
