package stats

import (
	"fmt"
	"strings"
)

// MalformedReport is the malformed traffic mixed into a load (rpcload run
// --mutate-fraction): the calls taken off the load, made malformed and
// judged one at a time by the fuzz oracle on connections of their own. Its
// figures are apart from the run's: the load's counts, latencies and
// violations never include them.
type MalformedReport struct {
	Fraction float64  `json:"fraction"` // share of the load's calls taken
	Seed     uint64   `json:"seed"`
	Ops      []string `json:"ops,omitempty"` // the mutation ops allowed (none listed: all)
	// Queued counts the calls taken and queued for the malformed
	// connections; Dropped those taken but not sent, every malformed
	// connection being busy and the queue full.
	Queued  uint64 `json:"queued"`
	Dropped uint64 `json:"dropped"`
	// Inputs counts the malformed inputs sent; Requests says how every
	// exchange ended (the inputs', the known-good canaries' sent between
	// them and the re-sends that confirm and minimize a finding: ok,
	// rpc_errors for an error reply that was the right one,
	// invalid_replies for a reply that broke a rule, timeouts,
	// transport_errors), Latency their corrected latency.
	Inputs   uint64   `json:"inputs"`
	Requests Requests `json:"requests"`
	Latency  Latency  `json:"latency"`
	// Rules counts, per rule, the frames whose reply broke it (or whose
	// missing reply did) and the extra replies that did: wrong_error_code
	// for a parse error answered with a non-null id, hang for no answer
	// where one was due, crash for a connection closed or reset. A reply
	// that broke two rules counts under both. The frames sent again to
	// confirm and minimize a finding count too, as the server saw them.
	Rules map[string]uint64 `json:"rules"`
	// ParseErrorIDs counts the replies to unparseable frames that carried
	// an id other than null: among the wrong_error_code above.
	ParseErrorIDs uint64 `json:"parse_error_ids"`
	// Findings are the distinct failures and warnings written, each a
	// directory in rpcfuzz's format (rpcfuzz replay and minimize read it).
	Findings    []MalformedFinding `json:"findings"`
	Failures    int                `json:"failures"`    // findings of severity failure
	Unconfirmed int                `json:"unconfirmed"` // failures that were not kept (not written)
	OutDir      string             `json:"out_dir"`
	Stopped     string             `json:"stopped,omitempty"` // why the malformed traffic stopped before the load did
}

// MalformedFinding names one finding of the malformed traffic.
type MalformedFinding struct {
	ID       string `json:"id"`
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Dir      string `json:"dir"`
	Note     string `json:"note,omitempty"`
}

// writeTextMalformed writes the malformed traffic's section.
func writeTextMalformed(p printf, m *MalformedReport) {
	what := "the scenario's raw and mutate calls"
	if m.Fraction > 0 {
		what = FormatRate(100*m.Fraction) + "% of the calls made malformed"
	}
	p("\nmalformed   %s (seed %d): %d inputs sent", what, m.Seed, m.Inputs)
	if m.Dropped > 0 {
		p(", %d dropped (every malformed connection busy)", m.Dropped)
	}
	p("\n")
	q := m.Requests
	p("  exchanges (inputs, known-good canaries, re-sends of findings): answered as due %d, error replies as due %d, breaking a rule %d, timeouts %d, transport errors %d\n",
		q.OK, q.RPCErrors, q.InvalidReplies, q.Timeouts, q.TransportErrors)
	if len(m.Rules) == 0 {
		p("  rules broken: none\n")
	} else {
		var parts []string
		for _, name := range SortedKeys(m.Rules) {
			parts = append(parts, fmt.Sprintf("%s %d", name, m.Rules[name]))
		}
		p("  rules broken (frames or replies): %s\n", strings.Join(parts, ", "))
	}
	if m.ParseErrorIDs > 0 {
		p("  parse errors answered with an id other than null: %d\n", m.ParseErrorIDs)
	}
	for _, f := range m.Findings {
		p("  %s %s: %s\n", f.Severity, f.ID, OneLine(f.Dir, 200))
	}
	if m.Stopped != "" {
		p("  stopped early: %s\n", OneLine(m.Stopped, 300))
	}
}
