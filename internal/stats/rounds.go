package stats

// RoundsReport is the outcome of running several targets in alternation
// under the same load (--target A --target B --rounds N).
type RoundsReport struct {
	Targets []string      `json:"targets"`
	Rounds  int           `json:"rounds"`
	Runs    []RoundRun    `json:"runs"`   // in the order they ran
	Ratios  []RoundsRatio `json:"ratios"` // each target but the first against the first
}

// RoundRun is one run of one target in one round.
type RoundRun struct {
	Round      int     `json:"round"`  // 1-based
	Target     int     `json:"target"` // index into Targets
	AnsweredPS float64 `json:"answered_per_s"`
	P50us      int64   `json:"p50_us"`
	P99us      int64   `json:"p99_us"`
	ErrorRate  float64 `json:"error_rate"`
}

// RoundsRatio summarises one figure's ratio (target / first target) over the
// rounds: its median and spread, and whether the difference is within the
// noise of the rounds themselves.
type RoundsRatio struct {
	Target      int     `json:"target"`
	Figure      string  `json:"figure"`
	Median      float64 `json:"median"`
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	WithinNoise bool    `json:"within_noise"`
	Verdict     string  `json:"verdict"`
}
