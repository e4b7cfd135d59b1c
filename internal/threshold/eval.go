package threshold

import (
	"fmt"
	"math"
	"strconv"

	"github.com/rpcload/rpcload/internal/stats"
)

// Eval judges r against t. Latencies are compared in microseconds, the
// result's unit. A figure that cannot be measured (a method absent from the
// result or without replies, an error rate of nothing sent) fails, with the
// reason in Detail: a gate that cannot see must not open.
func (t Threshold) Eval(r *stats.Result) stats.ThresholdVerdict {
	v := stats.ThresholdVerdict{Expr: t.src, Method: t.left.method, Rule: t.left.rule, Figure: t.left.figure}
	if v.Expr == "" {
		v.Expr = t.String()
	}
	i, ok := figureIndex[t.left.figure]
	if !ok || t.op == 0 {
		v.Detail = "not a parsed threshold"
		return v
	}
	def := &figureDefs[i]
	if t.right.figure == "" {
		v.Limit = t.scaledLiteral(def.kind)
	}
	value, why := t.left.measure(def, r)
	if why != "" {
		v.Detail = t.left.subject() + " cannot be measured: " + why
		return v
	}
	v.Value = value
	limitText := formatFloat(t.lit) + t.unit
	if t.right.figure != "" {
		rdef := &figureDefs[figureIndex[t.right.figure]]
		rv, why := t.right.measure(rdef, r)
		if why != "" {
			v.Detail = fmt.Sprintf("%s was %s, but the limit's %s cannot be measured: %s",
				t.left.subject(), def.kind.format(value), t.right.subject(), why)
			return v
		}
		v.Limit = t.factor * rv
		limitText = t.rightText() + " = " + def.kind.format(v.Limit)
	}
	v.Pass = t.op.holds(value, v.Limit)
	v.Detail = fmt.Sprintf("%s was %s, limit %s %s", t.left.subject(), def.kind.format(value), opText[t.op], limitText)
	return v
}

// scaledLiteral is the number limit in the result's unit for k.
func (t Threshold) scaledLiteral(k kind) float64 {
	switch {
	case k == kindDuration:
		return t.lit * durationUnits[t.unit]
	case t.unit == "%":
		return t.lit / 100
	}
	return t.lit
}

func (t Threshold) rightText() string {
	if t.factor == 1 {
		return t.right.String()
	}
	return formatFloat(t.factor) + "*" + t.right.String()
}

// measure reads o's figure from r, or says why it cannot.
func (o operand) measure(def *figureDef, r *stats.Result) (float64, string) {
	if r == nil {
		return 0, "there is no result"
	}
	s := scope{res: r, method: o.method, rule: o.rule, gauge: o.gauge, fate: o.fate,
		requests: r.Requests, violations: r.Violations, latency: r.Latency}
	if o.method != "" {
		m, ok := r.Methods[o.method]
		if !ok {
			return 0, fmt.Sprintf("the result has no method %s (%s)", o.method, methodList(r))
		}
		s.requests, s.violations, s.latency = m.Requests, m.Violations, m.Latency
	}
	return def.value(&s)
}

// subject names what o measures, for a Detail: "p99 of eth_call".
func (o operand) subject() string {
	s := o.name()
	if o.method != "" {
		s += " of " + o.method
	}
	if o.rule != "" {
		s += " for rule " + o.rule
	}
	if o.fate != "" {
		s += " of the requests that ended " + o.fate
	}
	return s
}

// FormatValue writes a value of the named figure (as a verdict records
// it: microseconds, a fraction, per second, a count) for people, in the
// figure's unit: "45ms", "0.1%", "499.33/s". ok is false for a name that is
// no figure (a result file from another version); v is then written as a
// plain number.
func FormatValue(figure string, v float64) (s string, ok bool) {
	i, ok := figureIndex[figure]
	if !ok {
		return significant(v, 6), false
	}
	return figureDefs[i].kind.format(v), true
}

// format writes a measured value for people: latencies with a unit,
// fractions as percentages.
func (k kind) format(v float64) string {
	switch k {
	case kindDuration:
		switch {
		case v < 1e3:
			return round(v, 3) + "µs"
		case v < 1e6:
			return round(v/1e3, 3) + "ms"
		default:
			return round(v/1e6, 3) + "s"
		}
	case kindFraction:
		return significant(100*v, 4) + "%"
	case kindRate:
		return round(v, 2) + "/s"
	case kindNumber:
		return significant(v, 4)
	}
	return round(v, 3)
}

// round writes v with at most decimals digits after the point.
func round(v float64, decimals int) string {
	scale := math.Pow10(decimals)
	if math.Abs(v) >= 1e15 || math.IsInf(v*scale, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
}

// significant writes v with at most digits significant digits, without an
// exponent where that stays readable (0.0012 rather than 1.2e-03).
func significant(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'g', digits, 64)
	if r, err := strconv.ParseFloat(s, 64); err == nil && (r == 0 || math.Abs(r) >= 1e-6 && math.Abs(r) < 1e15) {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return s
}
