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

// ParseFraction reads a share: a percentage ("0.1%", "5%") or a plain
// fraction ("0.001"). Whether the value is in range is the flag's rule.
func ParseFraction(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if rest, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(rest), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a fraction: a percentage such as 0.1%% or a number such as 0.001", s)
	}
	return v * scale, nil
}

// Fraction is a share flag's value (pflag.Value): what ParseFraction reads.
type Fraction float64

// Set parses s with ParseFraction.
func (f *Fraction) Set(s string) error {
	v, err := ParseFraction(s)
	if err != nil {
		return err
	}
	*f = Fraction(v)
	return nil
}

// String prints the share as a percentage.
func (f *Fraction) String() string { return strconv.FormatFloat(float64(*f)*100, 'g', -1, 64) + "%" }

// Type names the value in the flags' help.
func (f *Fraction) Type() string { return "fraction" }
