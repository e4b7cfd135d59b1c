package stats

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeTextCapacity writes the search's steps as a table, the reasons of
// the failed ones, and the answer last.
func writeTextCapacity(w io.Writer, p printf, c *CapacityReport) {
	unit := c.Unit
	if unit == "" {
		unit = "req/s"
	}
	warm := ""
	if c.WarmupS > 0 {
		warm = fmt.Sprintf(" after a %s warm-up", seconds(c.WarmupS))
	}
	p("\ncapacity    SLO %s; steps of %s%s\n", strings.Join(c.SLO, ", "), seconds(c.StepS), warm)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  step\tphase\toffered\tachieved\tp50\tp90\tp99\tp99.9\tmax\tlag p99\terrors\tviolations\tcpu\tmachine\tverdict\t\n")
	for i, s := range c.Steps {
		verdict := "pass"
		if !s.Pass {
			verdict = "FAIL " + s.Blame
		}
		if s.StoppedEarly != "" {
			verdict += " (stopped)"
		}
		l := s.Latency
		lat := func(v int64) string {
			if l.Count == 0 {
				return "-"
			}
			return FormatMicros(v)
		}
		machine := "-"
		if s.MachineBusy >= 0 {
			machine = strconv.FormatFloat(100*s.MachineBusy, 'f', 0, 64) + "%"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.2f\t%s\t%s\t\n", i+1, s.Phase, FormatRate(s.Offered), FormatRate(s.Achieved),
			lat(l.P50us), lat(l.P90us), lat(l.P99us), lat(l.P999us), lat(l.MaxUs), FormatMicros(s.LagP99us),
			strconv.FormatFloat(100*s.ErrorRate, 'g', 3, 64)+"%", s.Violations, s.ClientCPU, machine, verdict)
	}
	_ = tw.Flush()
	for i, s := range c.Steps {
		if !s.Pass {
			p("  step %d (%s %s %s): %s\n", i+1, s.Phase, FormatRate(s.Offered), unit, strings.Join(s.Reasons, "; "))
		}
	}
	p("  (cpu: cores rpcload used; machine: share of the machine's CPU time busy)\n")
	p("  %s\n", c.Verdict)
}

// seconds writes a length given in seconds as a duration ("10s", "1.5s").
func seconds(s float64) string {
	return time.Duration(math.Round(s*1000) * float64(time.Millisecond)).String()
}

// FormatRate writes a rate for people: whole numbers with thousands
// separators from 100 up ("4,850"), three significant digits below.
func FormatRate(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if math.Abs(v) < 100 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	digits := strconv.FormatFloat(math.Abs(math.Round(v)), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}
