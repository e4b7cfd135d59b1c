package report

import (
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
