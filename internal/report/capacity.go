package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/stats"
)

// capacityView is the Capacity section of the page: each result's answer
// above the plots, which overlay the steps of every result that has a
// search, then each result's search and its steps.
type capacityView struct {
	Verdicts []capacityVerdict
	Paras    []string
	Plots    []plot
	Notes    []string
	Results  []section
}

// capacityVerdict is one result's answer, in the search's own words.
type capacityVerdict struct {
	Style *lineStyle // nil with a single input: the page names it already
	Name  string
	Text  string
	Class string
}

// capEntry is an input that holds a capacity search.
type capEntry struct {
	entry
	C *stats.CapacityReport
}

// phaseConfirm is the phase of a confirming run: it repeats the answer's
// rate, so it is marked apart rather than joined into the lines.
const phaseConfirm = "confirm"

// How the reference lines are drawn: dashed unlike any data line, the
// SLO's in red.
const (
	sloColor = "#b00020" // the page's color of a failure: above the line fails
	sloDash  = "10 4"
	kneeDash = "4 4"
	diagDash = "2 3"
)

// capacityPercentiles are the latency lines of the capacity plot.
var capacityPercentiles = []struct {
	label string
	get   func(l stats.Latency) int64
}{
	{"p50", func(l stats.Latency) int64 { return l.P50us }},
	{"p90", func(l stats.Latency) int64 { return l.P90us }},
	{"p99", func(l stats.Latency) int64 { return l.P99us }},
	{"p99.9", func(l stats.Latency) int64 { return l.P999us }},
}

// capacitySection is the section of the inputs that hold a capacity
// search, or nil when none does. Colors and dashes follow the number of
// inputs on the page, not of searches, so a result keeps its color in
// every plot.
func capacitySection(es []entry) *capacityView {
	var cs []capEntry
	for _, e := range es {
		if e.R.Capacity != nil {
			cs = append(cs, capEntry{e, e.R.Capacity})
		}
	}
	if len(cs) == 0 {
		return nil
	}
	v := &capacityView{Paras: []string{"The summary, plots and details further down describe one run of the search: " +
		"its confirming run when that met the SLO, otherwise the step at the answer's rate, or else its last step."}}
	several := len(es) > 1
	for _, c := range cs {
		text, class := capacityVerdictText(c.C)
		cv := capacityVerdict{Text: text, Class: class}
		if several {
			st := resultStyle(c.Index)
			cv.Style, cv.Name = &st, c.Name
		}
		v.Verdicts = append(v.Verdicts, cv)
		v.Results = append(v.Results, capacityDetail(c, several))
	}
	lat, notes := capacityLatencyChart(cs, len(es))
	rate := capacityRateChart(cs, len(es))
	v.Plots = []plot{lat.render(), rate.render()}
	v.Notes = notes
	return v
}

// capacityUnit is what r's rates count.
func capacityUnit(r *stats.CapacityReport) string {
	if r.Unit == "" {
		return "req/s"
	}
	return r.Unit
}

// capacityAxisUnit is the unit of the rate axes: the searches' own when
// they agree.
func capacityAxisUnit(cs []capEntry) string {
	u := capacityUnit(cs[0].C)
	for _, c := range cs[1:] {
		if capacityUnit(c.C) != u {
			return "per second"
		}
	}
	return u
}

// capacityVerdictText is the search's verdict, or one written from its
// figures when the file has none, with the class it is shown in: an
// answer, a lower bound or an unconfirmed answer, or no answer.
func capacityVerdictText(r *stats.CapacityReport) (text, class string) {
	// The search writes its verdict to follow "capacity" in the text
	// report; alone at the head of a section it starts a sentence.
	text = capitalize(r.Verdict)
	u := capacityUnit(r)
	if text == "" {
		switch {
		case r.Rate > 0 && r.Confirmed:
			text = fmt.Sprintf("Sustains %s %s within the SLO, confirmed.", stats.FormatRate(r.Rate), u)
		case r.Rate > 0:
			text = fmt.Sprintf("Sustains %s %s within the SLO.", stats.FormatRate(r.Rate), u)
		case len(r.Steps) == 0:
			text = "No step ran: the search has no answer."
		case r.LimitedBy == "interrupted":
			text = "No answer: the search was interrupted before a step met the SLO."
		default:
			text = fmt.Sprintf("No rate met the SLO: even the first step, at %s %s, failed.", stats.FormatRate(r.Steps[0].Offered), u)
		}
	}
	switch {
	case !(r.Rate > 0):
		class = "fail"
	case lowerBound(r.LimitedBy) || (r.ConfirmS > 0 && !r.Confirmed):
		class = "warn"
	default:
		class = "pass"
	}
	return text, class
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// lowerBound says the search ended on something other than the server,
// so its answer understates what the server sustains.
func lowerBound(limitedBy string) bool {
	switch limitedBy {
	case "load_generator", "machine", "connections", "interrupted":
		return true
	}
	return false
}

var limitedBySentences = map[string]string{
	"server":         "The search ended on the server: a step at a higher rate broke the SLO because of it.",
	"load_generator": "The search ended on the load generator: a step at a higher rate failed because rpcload could not keep up, so the answer is only a lower bound of what the server sustains.",
	"machine":        "The search ended on the machine: a step at a higher rate failed while the machine's CPU was busy, so the answer is only a lower bound of what the server sustains.",
	"connections":    "The search ended on the connections: a step at a higher rate failed for want of connections, not because of the server, so the answer is only a lower bound of what the server sustains.",
	"max_rate":       "The search reached the highest rate it was allowed to offer without a failure: the server may sustain more.",
	"interrupted":    "The search was interrupted.",
}

func limitedBySentence(v string) string {
	if s, ok := limitedBySentences[v]; ok {
		return s
	}
	if v == "" {
		return ""
	}
	return "The search ended: " + v + "."
}

// searchSettings says how the search went about it, leaving out what the
// file does not record.
func searchSettings(r *stats.CapacityReport) string {
	u := capacityUnit(r)
	var parts []string
	if r.StartRate > 0 {
		parts = append(parts, "from "+stats.FormatRate(r.StartRate)+" "+u)
	}
	if r.Growth > 0 {
		parts = append(parts, "×"+strconv.FormatFloat(r.Growth, 'f', -1, 64)+" per step until a step fails")
	}
	if r.Precision > 0 {
		parts = append(parts, "then bisecting to within "+strconv.FormatFloat(math.Round(r.Precision*1e5)/1e3, 'f', -1, 64)+"%")
	}
	if r.MaxRate > 0 {
		parts = append(parts, "never above "+stats.FormatRate(r.MaxRate)+" "+u)
	}
	if r.StepS > 0 {
		s := "steps measured for " + fmtSeconds(r.StepS)
		if r.WarmupS > 0 {
			s += " after " + fmtSeconds(r.WarmupS) + " of warm-up"
		}
		parts = append(parts, s)
	}
	if r.ConfirmS > 0 {
		parts = append(parts, "a confirming run of "+fmtSeconds(r.ConfirmS))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Search: " + strings.Join(parts, ", ") + "."
}

// capacityDetail is one result's search: its SLO and settings, how it
// ended, and its steps.
func capacityDetail(c capEntry, several bool) section {
	r := c.C
	sec := section{Title: "Steps, in the order they ran"}
	if several {
		st := resultStyle(c.Index)
		sec.Style, sec.Title = &st, c.Name+": steps, in the order they ran"
	}
	if len(r.SLO) > 0 {
		sec.Paras = append(sec.Paras, "SLO: "+strings.Join(r.SLO, ", ")+".")
	}
	for _, p := range []string{searchSettings(r), limitedBySentence(r.LimitedBy)} {
		if p != "" {
			sec.Paras = append(sec.Paras, p)
		}
	}
	if len(r.Steps) == 0 {
		sec.Paras = append(sec.Paras, "No step ran.")
		return sec
	}
	sec.Tables = stepTables(r)
	return sec
}

// stepTables are the steps in the order they ran, then why each step
// that failed did: the judge's reasons run to a few hundred characters,
// which squeezed into a column of the wide table would leave it too wide
// for the page or the reasons a word per line.
func stepTables(r *stats.CapacityReport) []table {
	u := capacityUnit(r)
	steps := table{Head: []cell{txt("step"), txt("phase"), txt("offered (" + u + ")"), txt("achieved (" + u + ")"),
		txt("p50"), txt("p90"), txt("p99"), txt("p99.9"), txt("max"), txt("errors"), txt("violations"), txt("verdict")}}
	why := table{Caption: "why the failed steps failed", Head: []cell{txt("step"), txt("phase"), txt("offered (" + u + ")"), txt("verdict"), txt("reasons")}}
	for i, s := range r.Steps {
		l := s.Latency
		achieved := num(stats.FormatRate(s.Achieved))
		if s.Offered > 0 && s.Achieved < 0.99*s.Offered {
			achieved.Class = "num warn" // the load generator fell behind the rate it was to offer
		}
		errs := dash()
		if s.Sent > 0 || s.ErrorRate > 0 {
			errs = num(fmtPercent(s.ErrorRate))
			if s.ErrorRate > 0 {
				errs.Class = "num warn" // within the SLO's error budget it is no failure
			}
		}
		n, offered := num(strconv.Itoa(i+1)), num(stats.FormatRate(s.Offered))
		verdict, reasons := stepVerdict(s)
		steps.Rows = append(steps.Rows, []cell{n, txt(s.Phase), offered, achieved,
			latencyCell(l, l.P50us), latencyCell(l, l.P90us), latencyCell(l, l.P99us), latencyCell(l, l.P999us), latencyCell(l, l.MaxUs),
			errs, bad(s.Violations), verdict})
		if !s.Pass || reasons != "" {
			why.Rows = append(why.Rows, []cell{n, txt(s.Phase), offered, verdict, {Text: reasons, Class: "why"}})
		}
	}
	if len(why.Rows) == 0 {
		return []table{steps}
	}
	return []table{steps, why}
}

// stepVerdict is a step's verdict with whose failure it was, and the
// reasons in words.
func stepVerdict(s stats.CapacityStep) (verdict cell, why string) {
	why = strings.Join(s.Reasons, "; ")
	if s.StoppedEarly != "" && !strings.Contains(why, s.StoppedEarly) {
		why = strings.TrimPrefix(why+"; stopped early: "+s.StoppedEarly, "; ") // the judge's reasons usually say it already
	}
	if s.Pass {
		return cell{Text: "pass", Class: "pass"}, why
	}
	return cell{Text: stepWord(s), Class: "fail"}, why
}

// stepWord is a step's verdict in a word or three: pass, fail (server).
func stepWord(s stats.CapacityStep) string {
	switch {
	case s.Pass:
		return "pass"
	case s.Blame == "":
		return "fail"
	}
	return "fail (" + strings.ReplaceAll(s.Blame, "_", " ") + ")"
}

// searchOrder is the indexes of the steps that make up the lines, by
// offered rate: every step but the confirming runs.
func searchOrder(steps []stats.CapacityStep) []int {
	var idx []int
	for i, s := range steps {
		if s.Phase != phaseConfirm {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return steps[idx[a]].Offered < steps[idx[b]].Offered })
	return idx
}

// stepMark is a step's marker: hollow when it failed, square when it was
// a confirming run.
func stepMark(s stats.CapacityStep, x, y float64, color, title string) dataMark {
	return dataMark{X: x, Y: y, Color: color, Square: s.Phase == phaseConfirm, Hollow: !s.Pass, Title: title}
}

func stepCount(cs []capEntry) int {
	n := 0
	for _, c := range cs {
		n += len(c.C.Steps)
	}
	return n
}

// capacityLatencyChart plots each step's latency percentiles against its
// offered rate on a log axis, with the SLO's limit and the answers. It
// also returns the notes on steps that have no point for want of replies.
func capacityLatencyChart(cs []capEntry, n int) (chart, []string) {
	u := capacityAxisUnit(cs)
	c := chart{ID: "plot-capacity-latency", Title: "Latency by offered rate",
		Note: "Corrected latency (reply − intended send time) of each step's measured part against the rate it offered; the latency axis is logarithmic. " +
			"Filled points met the SLO, hollow ones failed it (the table says why); squares are confirming runs. " +
			"The red dashed line is the SLO's latency limit; the vertical line is the highest rate that met the SLO.",
		Empty: "No step had a reply: there is no latency to show.",
		X:     axisSpec{Label: "offered (" + u + ")", UnitOf: countUnit},
		Y:     axisSpec{Label: "corrected latency", UnitOf: latencyUnit, Log: true},
	}
	if stepCount(cs) == 0 {
		c.Empty = "No step ran: there is nothing to plot."
	}
	var notes []string
	for _, e := range cs {
		steps := e.C.Steps
		order := searchOrder(steps)
		for k, pc := range capacityPercentiles {
			st := styleOf(e.Index, k, n)
			l := dataLine{lineStyle: st, Name: e.Name + ": " + pc.label}
			var seg []xy
			for _, i := range order {
				if steps[i].Latency.Count == 0 {
					if len(seg) > 0 {
						l.Segs = append(l.Segs, seg) // a step without replies breaks the line
					}
					seg = nil
					continue
				}
				seg = append(seg, xy{steps[i].Offered, float64(pc.get(steps[i].Latency))})
			}
			if len(seg) > 0 {
				l.Segs = append(l.Segs, seg)
			}
			if len(l.Segs) > 0 {
				c.Lines = append(c.Lines, l)
			}
			for i, s := range steps {
				if s.Latency.Count == 0 {
					continue
				}
				v := pc.get(s.Latency)
				title := fmt.Sprintf("%s, step %d (%s, %s): %s %s at %s %s offered", e.Name, i+1, s.Phase, stepWord(s), pc.label, fmtUs(v), stats.FormatRate(s.Offered), capacityUnit(e.C))
				c.Marks = append(c.Marks, stepMark(s, s.Offered, float64(v), st.Color, title))
			}
		}
		if note := noReplyNote(e, n); note != "" {
			notes = append(notes, note)
		}
	}
	c.Refs = append(sloRefs(cs), kneeRefs(cs, n)...)
	c.Legend = capacityLegend(cs, n, func(k int) string { return capacityPercentiles[k].label }, len(capacityPercentiles))
	c.MarkLegend = markLegend(cs)
	return c, notes
}

// noReplyNote names the steps of e that the latency plot leaves out.
func noReplyNote(e capEntry, n int) string {
	var missing []string
	for i, s := range e.C.Steps {
		if s.Latency.Count == 0 {
			missing = append(missing, strconv.Itoa(i+1))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	what := "Step " + missing[0] + " had no reply, hence no latency: the latency plot has no point for it."
	if len(missing) > 1 {
		what = "Steps " + strings.Join(missing, ", ") + " had no reply, hence no latency: the latency plot has no points for them."
	}
	if n > 1 {
		what = e.Name + ": " + strings.ToLower(what[:1]) + what[1:]
	}
	return what
}

// capacityRateChart plots each step's achieved rate against its offered
// rate: a step below the y = x line is one the load generator could not
// send in full.
func capacityRateChart(cs []capEntry, n int) chart {
	u := capacityAxisUnit(cs)
	c := chart{ID: "plot-capacity-rate", Title: "Achieved rate by offered rate",
		Note: "Messages written per second of each step's measured part against the rate the step offered. " +
			"On the dotted line rpcload sent all it was asked to; below it, it fell behind. " +
			"Filled points met the SLO, hollow ones failed it; squares are confirming runs; the vertical line is the highest rate that met the SLO.",
		Empty: "No step ran: there is nothing to plot.",
		X:     axisSpec{Label: "offered (" + u + ")", UnitOf: countUnit},
		Y:     axisSpec{Label: "achieved (" + u + ")", UnitOf: countUnit},
	}
	top := 0.0
	for _, e := range cs {
		steps := e.C.Steps
		st := styleOf(e.Index, 0, n)
		var seg []xy
		for _, i := range searchOrder(steps) {
			seg = append(seg, xy{steps[i].Offered, steps[i].Achieved})
		}
		if len(seg) > 0 {
			c.Lines = append(c.Lines, dataLine{lineStyle: st, Name: e.Name + ": achieved", Segs: [][]xy{seg}})
		}
		for i, s := range steps {
			top = math.Max(top, s.Offered)
			title := fmt.Sprintf("%s, step %d (%s, %s): achieved %s of %s %s offered", e.Name, i+1, s.Phase, stepWord(s), stats.FormatRate(s.Achieved), stats.FormatRate(s.Offered), capacityUnit(e.C))
			c.Marks = append(c.Marks, stepMark(s, s.Offered, s.Achieved, st.Color, title))
		}
	}
	if top > 0 && !math.IsInf(top, 0) {
		c.Refs = append(c.Refs, refLine{lineStyle: lineStyle{neutral, diagDash}, Kind: refSegment, To: xy{top, top}})
	}
	c.Refs = append(c.Refs, kneeRefs(cs, n)...)
	c.Legend = capacityLegend(cs, n, func(int) string { return "achieved" }, 1)
	c.Legend = append(c.Legend, legendEntry{lineStyle{neutral, diagDash}, "achieved = offered"})
	c.MarkLegend = markLegend(cs)
	return c
}

// capacityLegend keys the kinds of line as every plot does: by color with
// one input, by result color and then by dash with several.
func capacityLegend(cs []capEntry, n int, label func(k int) string, kinds int) []legendEntry {
	var l []legendEntry
	if n == 1 {
		for k := range kinds {
			l = append(l, legendEntry{styleOf(cs[0].Index, k, 1), label(k)})
		}
		return l
	}
	es := make([]entry, len(cs))
	for i, c := range cs {
		es[i] = c.entry
	}
	l = resultLegend(es)
	if kinds > 1 {
		for k := range kinds {
			l = append(l, legendEntry{lineStyle{neutral, styleOf(0, k, n).Dash}, label(k)})
		}
	}
	return l
}

// markLegend keys the kinds of marker the steps have.
func markLegend(cs []capEntry) []markKey {
	kinds := []struct {
		label   string
		confirm bool
		pass    bool
	}{{"met the SLO", false, true}, {"failed it", false, false}, {"confirming run", true, true}, {"confirming run, failed", true, false}}
	var keys []markKey
	for _, k := range kinds {
		found := false
		for _, c := range cs {
			for _, s := range c.C.Steps {
				found = found || ((s.Phase == phaseConfirm) == k.confirm && s.Pass == k.pass)
			}
		}
		if found {
			m := dataMark{Color: neutral, Square: k.confirm, Hollow: !k.pass}
			keys = append(keys, markKey{newMark(7, 5, m), k.label})
		}
	}
	return keys
}

// sloRefs draws each distinct latency limit once; only when the searches
// differ in it does a label name whose it is.
func sloRefs(cs []capEntry) []refLine {
	var limits []int64
	owners := map[int64][]string{}
	for _, c := range cs {
		lim := c.C.LatencyLimitUs
		if lim <= 0 || len(c.C.Steps) == 0 {
			continue
		}
		if _, ok := owners[lim]; !ok {
			limits = append(limits, lim)
		}
		owners[lim] = append(owners[lim], c.Name)
	}
	var refs []refLine
	for _, lim := range limits {
		label := "SLO " + thresholdValue("p99", float64(lim))
		if len(limits) > 1 {
			label += " (" + strings.Join(owners[lim], ", ") + ")"
		}
		refs = append(refs, refLine{lineStyle: lineStyle{sloColor, sloDash}, Kind: refHorizontal, V: float64(lim), Label: label})
	}
	return refs
}

// kneeRefs marks each search's answer; a search without one (rate 0) has
// no line, and its verdict says why.
func kneeRefs(cs []capEntry, n int) []refLine {
	var refs []refLine
	for _, c := range cs {
		r := c.C
		if !(r.Rate > 0) || math.IsInf(r.Rate, 0) || len(r.Steps) == 0 {
			continue
		}
		rate := stats.FormatRate(r.Rate) + " " + capacityUnit(r)
		label, st := "sustains "+rate, lineStyle{neutral, kneeDash}
		if n > 1 {
			label, st.Color = c.Name+": "+rate, palette[c.Index%len(palette)]
		}
		if r.ConfirmS > 0 && !r.Confirmed {
			label += " (unconfirmed)"
		}
		refs = append(refs, refLine{lineStyle: st, Kind: refVertical, V: r.Rate, Label: label, Row: len(refs)})
	}
	return refs
}
