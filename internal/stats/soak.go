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
