package report

import (
	"github.com/rpcload/rpcload/internal/stats"

	"math"
	"strconv"
	"strings"
)

// fmtUs formats microseconds as the text report does, so both read the same.
func fmtUs(v int64) string { return stats.FormatMicros(v) }

// fmtCount groups the digits of n in threes, so large counts read at a
// glance.
func fmtCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtInt is fmtCount for signed counts.
func fmtInt(n int64) string {
	if n < 0 {
		return "-" + fmtCount(uint64(-n))
	}
	return fmtCount(uint64(n))
}

// fmtRate formats a per-second figure with one decimal.
func fmtRate(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "/s" }

// fmtPercent formats a fraction 0..1 as a percentage with two decimals.
func fmtPercent(f float64) string { return strconv.FormatFloat(100*f, 'f', 2, 64) + "%" }

// fmtBytes formats a byte count in binary units.
func fmtBytes(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}

// fmtSeconds formats a length of time given in seconds.
func fmtSeconds(s float64) string { return strconv.FormatFloat(s, 'f', 2, 64) + " s" }

// unit is how an axis shows its values: each value is divided by Div and
// followed by Suffix. The plots choose one per axis from the largest value,
// so tick labels stay short (250 ms rather than 250000 µs).
type unit struct {
	Div    float64
	Suffix string
}

// latencyUnit picks µs, ms or s for values up to maxUs microseconds.
func latencyUnit(maxUs float64) unit {
	switch {
	case maxUs < 1000:
		return unit{1, "µs"}
	case maxUs < 1e6:
		return unit{1e3, "ms"}
	default:
		return unit{1e6, "s"}
	}
}

// timeUnit picks s, min or h for a time axis that runs to maxS seconds.
func timeUnit(maxS float64) unit {
	switch {
	case maxS <= 300:
		return unit{1, "s"}
	case maxS <= 3*3600:
		return unit{60, "min"}
	default:
		return unit{3600, "h"}
	}
}

// countUnit shortens large counts with k and M.
func countUnit(maxV float64) unit {
	switch {
	case maxV < 10_000:
		return unit{1, ""}
	case maxV < 10_000_000:
		return unit{1e3, "k"}
	default:
		return unit{1e6, "M"}
	}
}

// bytesUnit picks a binary unit for memory sizes up to maxB bytes.
func bytesUnit(maxB float64) unit {
	switch {
	case maxB < 1<<10:
		return unit{1, "B"}
	case maxB < 1<<20:
		return unit{1 << 10, "KiB"}
	case maxB < 1<<30:
		return unit{1 << 20, "MiB"}
	default:
		return unit{1 << 30, "GiB"}
	}
}

// multiplier reports whether the suffix scales a count (k, M) rather than
// naming a unit: a multiplier goes on each tick, a unit once on the axis.
func (u unit) multiplier() bool { return u.Suffix == "k" || u.Suffix == "M" }

// label formats v (in the base unit) for a tick with the given step, with
// as many decimals as the step needs and no more. The unit is left to the
// axis label; a multiplier stays on the number (15k).
func (u unit) label(v, step float64) string {
	if v == 0 {
		return "0"
	}
	// As many decimals as the step has: a step of 2.5k needs one, or
	// 7.5k would read 8k.
	decimals := 0
	for s := step / u.Div; s > 0 && decimals < 6 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, s); s *= 10 {
		decimals++
	}
	out := strconv.FormatFloat(v/u.Div, 'f', decimals, 64)
	if u.multiplier() {
		return out + u.Suffix
	}
	return out
}

// niceTicks returns ticks from 0 up to at least maxV, about n of them, at
// steps of 1, 2 or 5 times a power of ten (in units of div, so a 250 ms
// axis gets 50 ms steps rather than 50,000 µs ones that happen to be
// equal). The top of the axis is the last tick.
func niceTicks(maxV, div float64, n int) (ticks []float64, step float64) {
	if !(maxV > 0) || math.IsInf(maxV, 0) {
		maxV = div
	}
	raw := maxV / div / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	step *= div
	top := math.Ceil(maxV/step-1e-9) * step
	for i := 0; i <= int(math.Round(top/step)) && i <= 4*n; i++ {
		ticks = append(ticks, float64(i)*step)
	}
	return ticks, step
}
