package report

import (
	"slices"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
)

// TestSummaryRateUnits: the summary's rate names what it counts. The
// schedule counts messages, a batch being one; with batches the requests
// they carried get a rate of their own, and the sent row says how many
// messages and batches carried them.
func TestSummaryRateUnits(t *testing.T) {
	tests := []struct {
		name               string
		q                  stats.Requests
		wantRate, wantSent string
	}{
		{"no batches", stats.Requests{Sent: 990, Messages: 990}, "99.0/s of 100.0/s (99.00%)", "990"},
		{"batches of 5", stats.Requests{Sent: 4950, Messages: 990, Batches: 990},
			"99.0 batches/s of 100.0/s (99.00%); 495.0 req/s", "4,950 in 990 messages, 990 of them batches"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &stats.Result{DurationS: 10, Requests: tc.q, Rate: stats.Rate{Target: 100}}
			r.SetAchieved()
			got := map[string]string{}
			for _, row := range summaryTable([]entry{{R: r}}).Rows {
				got[row[0].Text] = row[1].Text
			}
			if got["rate achieved"] != tc.wantRate || got["sent"] != tc.wantSent {
				t.Errorf("rate achieved %q, sent %q; want %q, %q", got["rate achieved"], got["sent"], tc.wantRate, tc.wantSent)
			}
		})
	}
}

// TestThroughputMessagesLine: the throughput plot's target rate counts
// messages, so with batches the plot draws the messages written per second
// beside the requests, and without batches it does not.
func TestThroughputMessagesLine(t *testing.T) {
	for _, batches := range []bool{false, true} {
		p := stats.Point{T: 1, Sent: 500, Messages: 500, Answered: 500, TargetRate: 100}
		if batches {
			p.Messages, p.Batches = 100, 100
		}
		r := &stats.Result{DurationS: 2, Rate: stats.Rate{Target: 100}, Series: []stats.Point{p, {T: 2, Sent: 500, Messages: p.Messages, Batches: p.Batches, Answered: 500, TargetRate: 100}}}
		var names []string
		for _, c := range timeCharts([]entry{{Name: "a", R: r}}) {
			if c.ID == "plot-throughput" {
				for _, l := range c.Lines {
					names = append(names, l.Name)
				}
			}
		}
		if got := slices.Contains(names, "a: messages/s"); got != batches {
			t.Errorf("batches %v: lines %q", batches, names)
		}
	}
}
