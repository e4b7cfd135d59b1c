package stats

import (
	"fmt"
	"math"
	"strings"
)

// writeTextServerGauges says where the server's gauges were read from and
// how often that failed.
func writeTextServerGauges(p printf, g *ServerGauges) {
	if g == nil {
		return
	}
	p("\nserver gauges  from %s: %d reads, %d failed\n", OneLine(strings.Join(g.Sources, ", "), 200), g.Reads, g.Failures)
	if len(g.Gauges) > 0 {
		p("  read: %s\n", OneLine(strings.Join(g.Gauges, ", "), 300))
	}
	for _, e := range g.Errors {
		p("  failed: %s\n", OneLine(e, 200))
	}
	if len(g.Missing) > 0 {
		p("  never found: %s\n", OneLine(strings.Join(g.Missing, ", "), 300))
	}
}

// writeTextGauges writes a soak's table of the server's gauges: the
// growth per request and its fit, per hour, the quiet phase's share kept,
// the verdict; then each gauge's split by fate, or why there is none.
func writeTextGauges(p printf, gs []GaugeGrowth) {
	if len(gs) == 0 {
		return
	}
	width := len("server gauge")
	for _, g := range gs {
		width = max(width, min(len(g.Name), 48))
	}
	p("  %-*s  %14s  %5s  %14s  %10s  %s\n", width, "server gauge", "per request", "R²", "per hour", "quiet kept", "verdict")
	for _, g := range gs {
		perReq, r2, perHour, kept := NoValue, NoValue, NoValue, NoValue
		if pr := g.PerRequest; pr != nil {
			perReq, r2 = GaugeAmount(g.Unit, pr.Slope), fmt.Sprintf("%.2f", pr.R2)
		}
		if g.PerHour != nil {
			perHour = GaugeAmount(g.Unit, g.PerHour.PerHour)
		}
		if q := g.Quiet; q != nil && q.Kept != nil {
			kept = fmt.Sprintf("%.0f%%", 100*math.Max(0, *q.Kept))
		}
		p("  %-*s  %14s  %5s  %14s  %10s  %s\n", width, OneLine(g.Name, 48), perReq, r2, perHour, kept, g.Verdict)
	}
	for _, g := range gs {
		pr := g.PerRequest
		if pr == nil {
			continue
		}
		for _, f := range pr.Fates {
			p("  %s per %s request: %s ± %s\n", OneLine(g.Name, 48), f.Fate, GaugeAmount(g.Unit, f.Slope), strings.TrimPrefix(GaugeAmount(g.Unit, f.StdErr), "+"))
		}
	}
}

// GaugeNoun is what a count gauge counts, from its name, for "+0.100
// goroutines per request"; "" when the name does not say.
func GaugeNoun(name string) string {
	switch {
	case strings.Contains(name, "goroutines"):
		return "goroutines"
	case strings.HasSuffix(name, "threads"):
		return "threads"
	case strings.HasSuffix(name, "_fds"):
		return "open files"
	}
	return ""
}

// GaugeAmount writes an amount of a server gauge, signed: bytes in B, KiB
// or MiB, anything else with three significant digits (whole above 1,000).
func GaugeAmount(unit string, v float64) string {
	if unit == "bytes" {
		switch a := math.Abs(v); {
		case a >= 1<<20:
			return fmt.Sprintf("%+.1f MiB", v/(1<<20))
		case a >= 1024:
			return fmt.Sprintf("%+.1f KiB", v/1024)
		case a >= 10 || a == 0:
			return fmt.Sprintf("%+.0f B", v)
		}
		return fmt.Sprintf("%+.2g B", v)
	}
	switch a := math.Abs(v); {
	case a >= 99.95 || a == 0:
		return fmt.Sprintf("%+.0f", v)
	case a < 1e-3:
		return fmt.Sprintf("%+.2e", v)
	}
	return fmt.Sprintf("%+#.3g", v) // 0.1 as +0.100: three figures, trailing zeros kept
}
