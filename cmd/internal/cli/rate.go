package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseRate reads a rate: a number per second ("500", "0.5"), or a number
// per unit of time as vegeta writes it ("50/1s", "3000/m", "10/100ms",
// "1/2h"; a bare unit means one of it). It returns messages per second.
// The number may be 0 or negative: whether that is allowed is the flag's
// rule, checked where the plan is validated. Errors quote s and name no
// flag.
func ParseRate(s string) (float64, error) {
	num, per, hasPer := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a rate: a number per second, or per unit of time as in 50/1s or 3000/m", s)
	}
	if !hasPer {
		return n, nil
	}
	per = strings.TrimSpace(per)
	if per != "" && (per[0] < '0' || per[0] > '9') && per[0] != '.' {
		per = "1" + per // "m" is one minute
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a rate: after the / comes a positive duration such as 1s, m or 100ms", s)
	}
	return n / d.Seconds(), nil
}

// Rate is a rate flag's value (pflag.Value): what ParseRate reads, in
// messages per second.
type Rate float64

// Set parses s with ParseRate.
func (r *Rate) Set(s string) error {
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = Rate(v)
	return nil
}

// String prints the rate per second.
func (r *Rate) String() string { return strconv.FormatFloat(float64(*r), 'g', -1, 64) }

// Type names the value in the flags' help.
func (r *Rate) Type() string { return "rate" }
