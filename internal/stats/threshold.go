package stats

// ThresholdVerdict is the outcome of one --threshold expression, evaluated
// on a result.
type ThresholdVerdict struct {
	Expr   string  `json:"expr"`             // as the user wrote it
	Method string  `json:"method,omitempty"` // the method filter, "" = all methods
	Rule   string  `json:"rule,omitempty"`   // violations{rule=...}: the one rule counted, "" = all but the warnings
	Figure string  `json:"figure"`           // what was measured, e.g. "p99"
	Value  float64 `json:"value"`            // the measured figure: latencies in microseconds, error rates as fractions, rates per second
	Limit  float64 `json:"limit"`            // the right-hand side, in the same unit
	Pass   bool    `json:"pass"`
	// Detail says in words what was compared, or why the figure could not
	// be measured (a method with no replies); a figure that cannot be
	// measured fails.
	Detail string `json:"detail"`
}
