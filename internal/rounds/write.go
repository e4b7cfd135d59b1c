package rounds

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// Write prints the report: the targets, one row per run, the ratios and the
// verdicts.
func Write(w io.Writer, rep *stats.RoundsReport) error {
	ew := &errWriter{w: w}
	fmt.Fprintln(ew, "targets:")
	for i, t := range rep.Targets {
		fmt.Fprintf(ew, "  %s  %s\n", Label(i), t)
	}
	fmt.Fprintf(ew, "order: %s\n", rep.Order)
	status := fmt.Sprintf("%d of %d rounds complete", rep.Completed, rep.Rounds)
	if rep.Interrupted {
		status += " (interrupted)"
	}
	fmt.Fprintf(ew, "%s\n\n", status)

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\ttarget\tanswered/s\tp50\tp95\tp99\terror rate\t\t")
	for _, r := range rep.Runs {
		note := ""
		if r.Interrupted {
			note = "interrupted"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%s\t%s\t%s\t%.2f%%\t%s\t\n", r.Round, Label(r.Target), r.AnsweredPS,
			micros(r.P50us), micros(r.P95us), micros(r.P99us), 100*r.ErrorRate, note)
	}
	tw.Flush()

	if len(rep.Ratios) > 0 {
		fmt.Fprintf(ew, "\nratios to %s (median over rounds, range, median absolute deviation; latency is corrected)\n", Label(0))
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "target\tfigure\tmedian\trange\tMAD\t\t")
		for _, rr := range rep.Ratios {
			if rr.Rounds == 0 || rr.BothZero {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\t\n", Label(rr.Target), figureText(rr.Figure), stats.NoValue, stats.NoValue, stats.NoValue)
				continue
			}
			judged := "real difference"
			switch {
			case rr.Rounds < MinRounds:
				judged = "too few rounds"
			case rr.WithinNoise:
				judged = "within the noise"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s-%s\t%.3f\t%s\t\n", Label(rr.Target), figureText(rr.Figure),
				ratioText(rr.Median), ratioText(rr.Min), ratioText(rr.Max), rr.MAD, judged)
		}
		tw.Flush()
		fmt.Fprintln(ew, "\nverdicts:")
		for _, rr := range rep.Ratios {
			fmt.Fprintf(ew, "  %s\n", rr.Verdict)
		}
	}
	return ew.err
}

func micros(us int64) string {
	return (time.Duration(us) * time.Microsecond).String()
}

// errWriter keeps the first write error, so a report is written without an
// error check per line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
