package stats

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// DiffReport counts requests whose results differed between two targets
// (--diff): the same generated request sent to both, the replies compared as
// canonical JSON.
type DiffReport struct {
	Targets     []string `json:"targets"`
	IgnorePaths []string `json:"ignore_paths"`
	// Compared counts the requests at least one target answered; a request
	// only one target answered is a mismatch at "$".
	Compared   uint64 `json:"compared"`
	Mismatches uint64 `json:"mismatches"`
	// Unanswered counts the requests neither target answered (not
	// compared; target A's failures are in the result's requests).
	Unanswered uint64 `json:"unanswered"`
	// Skipped counts the elements that get no reply to compare:
	// notifications and id-reuse probes, which a diff does not send.
	Skipped uint64                `json:"skipped"`
	Methods map[string]DiffMethod `json:"methods"`
	Samples []DiffSample          `json:"samples"` // the mismatches of the lowest sequence numbers
}

// DiffMethod is the per-method part of a DiffReport.
type DiffMethod struct {
	Compared   uint64 `json:"compared"`
	Mismatches uint64 `json:"mismatches"`
	Unanswered uint64 `json:"unanswered"`
}

// DiffSample is one mismatch kept as an example.
type DiffSample struct {
	Method  string   `json:"method"`
	Seq     uint64   `json:"seq"`     // the call's sequence number (--dry-run with the same --seed shows it)
	Request string   `json:"request"` // as sent to A over HTTP; streams carry the id "rpcload-N" instead
	A       string   `json:"a"`       // replies cut to 2 KiB; "(no reply: ...)" when there was none
	B       string   `json:"b"`
	Paths   []string `json:"paths"` // where the canonical forms differ (the first 20)
	// MorePaths counts the differing paths beyond those listed.
	MorePaths int `json:"more_paths,omitempty"`
}

// WriteDiff renders a diff report: the counts per method and the samples.
func WriteDiff(w io.Writer, d *DiffReport) error {
	ew := &ErrWriter{W: w}
	fmt.Fprintf(ew, "diff of %s (A) and %s (B)\n", d.Targets[0], d.Targets[1])
	if len(d.IgnorePaths) > 0 {
		fmt.Fprintf(ew, "ignoring %s\n", strings.Join(d.IgnorePaths, ", "))
	}
	fmt.Fprintf(ew, "compared %d, mismatches %d, unanswered by both %d, not compared (notifications, probes) %d\n\n",
		d.Compared, d.Mismatches, d.Unanswered, d.Skipped)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tcompared\tmismatches\tunanswered\t")
	for _, name := range SortedKeys(d.Methods) {
		m := d.Methods[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", OneLine(name, 60), m.Compared, m.Mismatches, m.Unanswered)
	}
	tw.Flush()
	for i, s := range d.Samples {
		fmt.Fprintf(ew, "\nmismatch %d: %s, call %d, differs at %s", i+1, OneLine(s.Method, 60), s.Seq, strings.Join(s.Paths, " "))
		if s.MorePaths > 0 {
			fmt.Fprintf(ew, " and %d more", s.MorePaths)
		}
		fmt.Fprintf(ew, "\n  request: %s\n  A: %s\n  B: %s\n", OneLine(s.Request, 500), OneLine(s.A, 500), OneLine(s.B, 500))
	}
	return ew.Err()
}
