package stats

// RoundsReport is the outcome of running several targets in alternation
// under the same load (--target A --target B --rounds N).
type RoundsReport struct {
	Targets []string `json:"targets"`
	Rounds  int      `json:"rounds"` // rounds asked for
	// Completed counts the rounds in which every target ran to the end;
	// only those give ratios.
	Completed   int           `json:"completed"`
	Interrupted bool          `json:"interrupted"` // stopped early; the runs listed are what was measured
	Order       string        `json:"order"`       // how the targets take turns within a round
	Runs        []RoundRun    `json:"runs"`        // in the order they ran
	Ratios      []RoundsRatio `json:"ratios"`      // each target but the first against the first
}

// RoundRun is one run of one target in one round.
type RoundRun struct {
	Round       int     `json:"round"`  // 1-based
	Target      int     `json:"target"` // index into Targets
	StartedAt   string  `json:"started_at"`
	WallS       float64 `json:"wall_s"` // the whole run, connecting and draining included
	Interrupted bool    `json:"interrupted,omitempty"`
	AnsweredPS  float64 `json:"answered_per_s"`
	P50us       int64   `json:"p50_us"` // corrected latency
	P95us       int64   `json:"p95_us"`
	P99us       int64   `json:"p99_us"`
	ErrorRate   float64 `json:"error_rate"` // failed requests / sent, 0..1
}

// RoundsRatio summarises one figure's ratio (target / first target) over the
// rounds: its median and spread, and whether the difference is within the
// noise of the rounds themselves.
type RoundsRatio struct {
	Target int    `json:"target"`
	Figure string `json:"figure"` // answered_per_s, p50, p95, p99 or error_rate
	// Rounds counts the rounds that gave a ratio: complete rounds in which
	// the first target's figure was not zero (both zero counts as 1 for
	// the error rate).
	Rounds int     `json:"rounds"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	MAD    float64 `json:"mad"` // median absolute deviation of the ratios from their median
	// BaseSpread is the first target's own spread in those rounds:
	// (max - min) / median of its figure.
	BaseSpread  float64 `json:"base_spread"`
	WithinNoise bool    `json:"within_noise"`
	// BothZero: the figure was zero for both targets in every round (no
	// errors on either side), which is the same, though no ratio: Median,
	// Min and Max hold 1, and reports show no ratio.
	BothZero bool   `json:"both_zero,omitempty"`
	Verdict  string `json:"verdict"`
}
