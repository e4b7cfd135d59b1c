package schemagen

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
)

// bounds returns the inclusive integer range allowed by minimum, maximum and
// the exclusive forms (nil for an open end), and whether a bound was too
// large to handle.
func bounds(w *object) (lo, hi *big.Int, ok bool) {
	up := func(r *big.Rat, excl bool) *big.Int { // smallest integer > r (excl) or >= r
		q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
		if m.Sign() != 0 || excl {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	down := func(r *big.Rat, excl bool) *big.Int { // largest integer < r (excl) or <= r
		q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
		if m.Sign() == 0 && excl {
			q.Sub(q, big.NewInt(1))
		}
		return q
	}
	for _, k := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
		v, present := w.get(k)
		if !present {
			continue
		}
		if _, isNum := v.(json.Number); !isNum {
			continue // draft-04 boolean exclusive*: not supported, ignored
		}
		r, fine := ratOf(v)
		if !fine {
			return nil, nil, false
		}
		switch k {
		case "minimum", "exclusiveMinimum":
			b := up(r, k == "exclusiveMinimum")
			if lo == nil || b.Cmp(lo) > 0 {
				lo = b
			}
		default:
			b := down(r, k == "exclusiveMaximum")
			if hi == nil || b.Cmp(hi) < 0 {
				hi = b
			}
		}
	}
	return lo, hi, true
}

// pickInt chooses an integer in [lo, hi] (either may be nil), now and then at
// an end of the range.
func (g *gen) pickInt(lo, hi *big.Int, span int64) (*big.Int, bool) {
	switch {
	case lo == nil && hi == nil:
		lo = big.NewInt(0)
		if g.r.IntN(8) == 0 {
			lo = big.NewInt(-span)
		}
		hi = new(big.Int).Add(lo, big.NewInt(span))
	case lo == nil:
		lo = new(big.Int).Sub(hi, big.NewInt(span))
	case hi == nil:
		hi = new(big.Int).Add(lo, big.NewInt(span))
	}
	width := new(big.Int).Sub(hi, lo)
	if width.Sign() < 0 {
		return nil, false
	}
	switch g.r.IntN(10) {
	case 0:
		return lo, true
	case 1:
		return hi, true
	}
	var off int64
	if width.IsInt64() && width.Int64() < math.MaxInt64 {
		off = g.r.Int64N(width.Int64() + 1)
	} else {
		off = g.r.Int64N(math.MaxInt64)
	}
	return new(big.Int).Add(lo, big.NewInt(off)), true
}

// multiple reads multipleOf as a positive rational.
func multiple(w *object) (*big.Rat, bool, error) {
	v, ok := w.get("multipleOf")
	if !ok {
		return nil, false, nil
	}
	m, ok := ratOf(v)
	if !ok || m.Sign() <= 0 {
		return nil, false, errUnsat
	}
	return m, true, nil
}

func (g *gen) integer(w *object) (any, error) {
	if v, ok := g.edgeInteger(w); ok {
		return v, nil
	}
	lo, hi, ok := bounds(w)
	if !ok {
		return nil, errUnsat
	}
	m, hasM, err := multiple(w)
	if err != nil {
		return nil, err
	}
	if !hasM {
		n, ok := g.pickInt(lo, hi, 1000)
		if !ok {
			return nil, errUnsat
		}
		return json.Number(n.String()), nil
	}
	// integers that are multiples of p/q (lowest terms) are the multiples of p
	step := new(big.Int).Abs(m.Num())
	klo, khi := divRange(lo, hi, step)
	k, ok := g.pickInt(klo, khi, 100)
	if !ok {
		return nil, errUnsat
	}
	return json.Number(k.Mul(k, step).String()), nil
}

// divRange turns [lo, hi] into the range of k with lo <= k*step <= hi.
func divRange(lo, hi, step *big.Int) (klo, khi *big.Int) {
	if lo != nil {
		q, m := new(big.Int).DivMod(lo, step, new(big.Int)) // floor for positive step
		if m.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		klo = q
	}
	if hi != nil {
		khi, _ = new(big.Int).DivMod(hi, step, new(big.Int))
	}
	return klo, khi
}

func (g *gen) number(w *object) (any, error) {
	if v, ok := g.edgeNumber(w); ok {
		return v, nil
	}
	m, hasM, err := multiple(w)
	if err != nil {
		return nil, err
	}
	if hasM {
		// k*m for an integer k in range, written exactly in decimal
		lo, hi, ok := ratBounds(w)
		if !ok {
			return nil, errUnsat
		}
		var klo, khi *big.Int
		if lo != nil {
			klo = ceilRat(new(big.Rat).Quo(lo, m))
		}
		if hi != nil {
			khi = floorRat(new(big.Rat).Quo(hi, m))
		}
		k, ok := g.pickInt(klo, khi, 100)
		if !ok {
			return nil, errUnsat
		}
		v := new(big.Rat).Mul(new(big.Rat).SetInt(k), m)
		return json.Number(decimal(v)), nil
	}
	if g.r.IntN(4) == 0 {
		return g.integer(w) // integral numbers are numbers too
	}
	lo, hi := -math.MaxFloat64, math.MaxFloat64
	if f, ok := floatOf(first(w, "minimum", "exclusiveMinimum")); ok {
		lo = f
	}
	if f, ok := floatOf(first(w, "maximum", "exclusiveMaximum")); ok {
		hi = f
	}
	switch {
	case lo == -math.MaxFloat64 && hi == math.MaxFloat64:
		lo, hi = 0, 1000
	case lo == -math.MaxFloat64:
		lo = hi - 1000
	case hi == math.MaxFloat64:
		hi = lo + 1000
	}
	if lo > hi || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, errUnsat
	}
	v := lo + g.r.Float64()*(hi-lo)
	if r := math.Round(v*100) / 100; r >= lo && r <= hi && r != lo && r != hi {
		v = r
	}
	if v == lo || v == hi {
		v = lo + (hi-lo)/2
	}
	if g.edges {
		return json.Number(plainFloat(v)), nil
	}
	return json.Number(formatFloat(v)), nil
}

// first returns the value of the first keyword present, numeric or not.
func first(w *object, keys ...string) any {
	for _, k := range keys {
		if v, ok := w.get(k); ok {
			if _, isNum := v.(json.Number); isNum {
				return v
			}
		}
	}
	return nil
}

func formatFloat(v float64) string {
	if a := math.Abs(v); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ratBounds returns the tightest inclusive-or-exclusive bounds as rationals;
// exclusive bounds are nudged inwards by a small amount.
func ratBounds(w *object) (lo, hi *big.Rat, ok bool) {
	eps := big.NewRat(1, 1000000)
	for _, k := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
		v, present := w.get(k)
		if !present {
			continue
		}
		if _, isNum := v.(json.Number); !isNum {
			continue
		}
		r, fine := ratOf(v)
		if !fine {
			return nil, nil, false
		}
		switch k {
		case "exclusiveMinimum":
			r = new(big.Rat).Add(r, eps)
		case "exclusiveMaximum":
			r = new(big.Rat).Sub(r, eps)
		}
		if k == "minimum" || k == "exclusiveMinimum" {
			if lo == nil || r.Cmp(lo) > 0 {
				lo = r
			}
		} else if hi == nil || r.Cmp(hi) < 0 {
			hi = r
		}
	}
	return lo, hi, true
}

func floorRat(r *big.Rat) *big.Int {
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	return q
}

func ceilRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// decimal writes a rational with a terminating decimal expansion exactly
// (rounded to 40 places otherwise), without trailing zeros.
func decimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	places := 0
	d := new(big.Int).Set(r.Denom())
	two, five, zero := big.NewInt(2), big.NewInt(5), new(big.Int)
	for places < 40 && d.Cmp(big.NewInt(1)) != 0 {
		if new(big.Int).Mod(d, two).Cmp(zero) == 0 {
			d.Quo(d, two)
		}
		if new(big.Int).Mod(d, five).Cmp(zero) == 0 {
			d.Quo(d, five)
		}
		places++
	}
	s := r.FloatString(places)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}
