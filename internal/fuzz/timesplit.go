package fuzz

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// phase is what a worker's time goes to: summary.json's time_split.
type phase uint8

const (
	phaseOther    phase = iota // picking and mutating inputs, the corpus and tuples, --max-rate waits
	phaseSend                  // writing a fuzz input (its frames and the sync request)
	phaseWait                  // from the input written to the end of its exchange
	phaseJudge                 // judging the exchange and recording its latency
	phaseRestart               // closing a connection and making a new one: a child started, its handshake
	phaseConfirm               // re-running a candidate before it counts as a finding
	phaseMinimize              // shrinking a finding's input, and writing its directory
	phaseCanary                // canary checks, and the search for the input a failed one blames
	numPhases
)

// stopwatch charges a worker's busy time to phases by the run's clock:
// each switch charges the time since the last switch to the phase being
// left, so the phases always add up to the time the stopwatch ran. The
// exchanges of a check (confirming, minimizing, a canary) count as that
// check, all but their restarts, which count as restarts wherever they
// happen: restarting is what a dying child costs. The zero stopwatch (no
// clock) measures nothing: canary selection before the run's clock starts,
// replay.
type stopwatch struct {
	now   func() time.Time
	cur   phase
	check phase // the check in progress, or phaseOther in the main loop
	since time.Time
	acc   [numPhases]time.Duration
}

// start starts measuring with clock now.
func (s *stopwatch) start(now func() time.Time) {
	s.now, s.cur, s.check, s.since = now, phaseOther, phaseOther, now()
}

// to charges the time since the last switch to the current phase and
// makes p current; it returns the phase left.
func (s *stopwatch) to(p phase) phase {
	return s.toAt(p, time.Time{})
}

// toAt is to with the switch made at t (zero: now), for a moment an
// exchange noted as it passed (the input written).
func (s *stopwatch) toAt(p phase, t time.Time) phase {
	prev := s.cur
	if s.now == nil {
		return prev
	}
	if t.IsZero() {
		t = s.now()
	}
	if t.Before(s.since) {
		t = s.since // a clock that went back charges nothing
	}
	s.acc[s.cur] += t.Sub(s.since)
	s.since, s.cur = t, p
	return prev
}

// relabel makes the time since the last switch count as p.
func (s *stopwatch) relabel(p phase) { s.cur = p }

// exchange returns where an exchange's phase p goes: p in the main loop,
// the check's phase within a check.
func (s *stopwatch) exchange(p phase) phase {
	if s.check != phaseOther {
		return s.check
	}
	return p
}

// begin enters check p (confirm, minimize, canary) and returns what end
// restores.
func (s *stopwatch) begin(p phase) [2]phase {
	saved := [2]phase{s.cur, s.check}
	s.to(p)
	s.check = p
	return saved
}

// end leaves a check begun with begin.
func (s *stopwatch) end(saved [2]phase) {
	s.to(saved[0])
	s.check = saved[1]
}

// TimeSplit is where the workers' time went, summed over workers, each
// measured by the run's clock from the start of its loop to its end: every
// moment of a worker's loop is in exactly one part, so the parts add up to
// BusyS.
type TimeSplit struct {
	BusyS    float64 `json:"busy_s"`   // the workers' loops, from their start to their end, summed
	Send     Share   `json:"send"`     // writing fuzz inputs (streams; over HTTP a request and its response are one round trip, all in wait)
	Wait     Share   `json:"wait"`     // from an input written to the end of its exchange: its replies, a timeout, a child's exit status
	Judge    Share   `json:"judge"`    // judging exchanges and recording their latency
	Restart  Share   `json:"restart"`  // closing connections and making new ones: child processes started, handshakes (in checks too)
	Confirm  Share   `json:"confirm"`  // re-running candidates before they count as findings
	Minimize Share   `json:"minimize"` // shrinking findings' inputs and writing their directories
	Canary   Share   `json:"canary"`   // canary checks and the search for the input a failed one blames
	Other    Share   `json:"other"`    // picking and mutating inputs, the corpus, --max-rate waits
}

// Share is one part of TimeSplit: seconds, and their share of BusyS.
type Share struct {
	S     float64 `json:"s"`
	Share float64 `json:"share"`
}

// timeSplit sums the workers' stopwatches.
func timeSplit(acc [numPhases]time.Duration) TimeSplit {
	var busy time.Duration
	for _, d := range acc {
		busy += d
	}
	share := func(p phase) Share {
		sh := Share{S: acc[p].Seconds()}
		if busy > 0 {
			sh.Share = float64(acc[p]) / float64(busy)
		}
		return sh
	}
	return TimeSplit{BusyS: busy.Seconds(), Send: share(phaseSend), Wait: share(phaseWait), Judge: share(phaseJudge),
		Restart: share(phaseRestart), Confirm: share(phaseConfirm), Minimize: share(phaseMinimize), Canary: share(phaseCanary),
		Other: share(phaseOther)}
}

// parts lists the parts of the split with their names, in the order
// WriteText prints them.
func (t *TimeSplit) parts() []struct {
	name string
	sh   Share
} {
	return []struct {
		name string
		sh   Share
	}{{"send", t.Send}, {"wait", t.Wait}, {"judge", t.Judge}, {"restart", t.Restart}, {"confirm", t.Confirm},
		{"minimize", t.Minimize}, {"canary", t.Canary}, {"other", t.Other}}
}

// writeTimeSplit prints the split on one line.
func writeTimeSplit(w io.Writer, t *TimeSplit) {
	if t.BusyS <= 0 {
		return
	}
	var b strings.Builder
	for i, p := range t.parts() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.0f%%", p.name, 100*p.sh.Share)
	}
	fmt.Fprintf(w, "  time: %s of %.1f worker-seconds\n", b.String(), t.BusyS)
}
