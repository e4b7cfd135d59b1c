package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/threshold"
)

// summaryTable puts the headline figures of every result side by side,
// one column per result.
func summaryTable(es []entry) table {
	t := table{Head: []cell{txt("")}}
	for _, e := range es {
		st := resultStyle(e.Index)
		t.Head = append(t.Head, cell{Text: e.Name, Swatch: &st})
	}
	rows := []struct {
		label string
		value func(r *stats.Result) cell
	}{
		{"target", func(r *stats.Result) cell { return txt(r.Target) }},
		{"started", func(r *stats.Result) cell { return txt(r.StartedAt) }},
		{"mode", func(r *stats.Result) cell {
			mode := "closed loop"
			if r.Rate.Target > 0 {
				mode = "open loop"
			}
			mode += ", sending " + fmtSeconds(r.DurationS) + ", drain " + fmtSeconds(r.DrainS)
			if r.Interrupted {
				return cell{Text: mode + " (interrupted)", Class: "warn"}
			}
			return txt(mode)
		}},
		{"rate achieved", func(r *stats.Result) cell {
			s := fmtRate(r.Rate.Achieved)
			batches := r.Requests.Batches > 0
			if batches {
				// The schedule counts messages, a batch being one; the
				// requests they carried are a rate of their own.
				s = strings.TrimSuffix(s, "/s") + " " + stats.RateUnit(r.Requests.Messages, r.Requests.Batches)
			}
			if r.Rate.Target > 0 {
				s += " of " + fmtRate(r.Rate.Target) + " (" + fmtPercent(r.Rate.Achieved/r.Rate.Target) + ")"
			}
			if batches {
				s += "; " + strings.TrimSuffix(fmtRate(r.Rate.Requests), "/s") + " req/s"
			}
			if r.Rate.Target > 0 && r.Rate.Achieved < 0.99*r.Rate.Target {
				return cell{Text: s, Class: "num warn"}
			}
			return num(s)
		}},
		{"in flight max", func(r *stats.Result) cell { return num(fmtInt(r.InFlightMax)) }},
		{"sent", func(r *stats.Result) cell {
			s := fmtCount(r.Requests.Sent)
			if r.Requests.Notifications > 0 {
				s += " (+" + fmtCount(r.Requests.Notifications) + " notifications)"
			}
			if r.Requests.Batches > 0 {
				s += " in " + fmtCount(r.Requests.Messages) + " messages, " + fmtCount(r.Requests.Batches) + " of them batches"
			}
			return num(s)
		}},
		{"answered", func(r *stats.Result) cell { return num(fmtCount(r.Requests.Answered)) }},
		{"ok", func(r *stats.Result) cell { return num(fmtCount(r.Requests.OK)) }},
		{"rpc errors", func(r *stats.Result) cell { return bad(r.Requests.RPCErrors) }},
		{"invalid replies", func(r *stats.Result) cell { return bad(r.Requests.InvalidReplies) }},
		{"transport errors", func(r *stats.Result) cell { return bad(r.Requests.TransportErrors) }},
		{"timeouts", func(r *stats.Result) cell { return bad(r.Requests.Timeouts) }},
		{"late", func(r *stats.Result) cell { return bad(r.Requests.Late) }},
		{"leaked", func(r *stats.Result) cell { return bad(r.Requests.Leaked) }},
		{"dropped", func(r *stats.Result) cell { return bad(r.Requests.Dropped) }},
		{"violations", func(r *stats.Result) cell { return bad(sum(r.Violations)) }},
		{"corrected p50, p95, p99, max", func(r *stats.Result) cell {
			l := r.Latency.Corrected
			if l.Count == 0 {
				return dash()
			}
			return num(fmtUs(l.P50us) + ", " + fmtUs(l.P95us) + ", " + fmtUs(l.P99us) + ", " + fmtUs(l.MaxUs))
		}},
		{"connections", func(r *stats.Result) cell {
			c := r.Connections
			s := fmtInt(c.Opened) + " opened"
			if c.Lost > 0 {
				return cell{Text: s + ", " + fmtInt(c.Lost) + " lost", Class: "num warn"}
			}
			return num(s)
		}},
		{"warnings", func(r *stats.Result) cell {
			if len(r.Warnings) == 0 {
				return num("0")
			}
			return cell{Text: strconv.Itoa(len(r.Warnings)), Class: "num warn"}
		}},
	}
	for _, row := range rows {
		cells := []cell{{Text: row.label, Class: "key"}}
		for _, e := range es {
			cells = append(cells, row.value(e.R))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// bad shows a count that should be zero, marked when it is not.
func bad(n uint64) cell {
	if n == 0 {
		return num("0")
	}
	return cell{Text: fmtCount(n), Class: "num fail"}
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

func latencyCell(l stats.Latency, v int64) cell {
	if l.Count == 0 {
		return dash()
	}
	return num(fmtUs(v))
}

// errorRate is the share of requests sent that did not end in a result,
// as rpcload compare counts it.
func errorRate(q stats.Requests) (float64, bool) {
	bad := q.RPCErrors + q.InvalidReplies + q.TransportErrors + q.Timeouts + q.Leaked
	if q.Sent == 0 {
		return 0, false
	}
	return float64(bad) / float64(q.Sent), true
}

// comparisonTable holds the figures of rpcload compare
// (stats.WriteComparison): over all methods, then per method, each figure
// with its ratio to the first result. Each column is headed by its
// result's name and target. It also returns the comparison's warnings
// that the loads differ.
func comparisonTable(es []entry) (table, []string) {
	results := make([]*stats.Result, len(es))
	names := make([]string, len(es))
	for i, e := range es {
		results[i], names[i] = e.R, e.Name
	}
	targets, _ := stats.ComparisonHeads(names, results)
	t := table{Head: []cell{txt("method"), txt("")}}
	for i, e := range es {
		st := resultStyle(e.Index)
		t.Head = append(t.Head, cell{Text: e.Name + " (" + targets[i] + ")", Swatch: &st})
	}
	cmp := stats.Compare(names, results)
	for _, g := range cmp.Groups {
		for ri, r := range g.Rows {
			row := []cell{txt(""), {Text: r.Figure, Class: "key"}}
			if ri == 0 {
				row[0] = cell{Text: g.Name, Class: "key name"}
			}
			for _, c := range r.Cells {
				if c == stats.NoValue {
					row = append(row, dash())
				} else {
					row = append(row, num(c))
				}
			}
			if ri == 0 {
				for i := range row {
					row[i].Class += " group"
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, cmp.LoadDifferences
}

// resultDetail is everything one result holds, section by section; a
// section with nothing to show is left out.
func resultDetail(e entry) detail {
	r := e.R
	d := detail{ID: fmt.Sprintf("result-%d", e.Index+1), Name: e.Name, Style: resultStyle(e.Index), Warnings: r.Warnings}
	add := func(s section, ok bool) {
		if ok {
			d.Sections = append(d.Sections, s)
		}
	}
	add(thresholdSection(r.Thresholds), len(r.Thresholds) > 0)
	if r.Soak != nil {
		add(soakSection(r.Soak), true)
	}
	if r.ServerGauges != nil {
		add(serverGaugesSection(r.ServerGauges), true)
	}
	add(section{Title: "Latency", Paras: []string{"corrected: reply − intended send time; service: reply − actual write; lag: actual write − intended send time."},
		Tables: []table{latencyTable(r.Latency)}}, true)
	add(methodSection(r), len(r.Methods) > 0)
	add(errorCodeSection(r), len(r.ErrorCodes) > 0 || len(r.ErrorMessages) > 0)
	add(violationSection(r), len(r.Violations) > 0)
	if r.API != nil {
		// After the findings' rules: which methods they were about, and
		// which methods the run never got to.
		add(apiSection(r.API), true)
	}
	add(section{Title: "Transport errors seen", Tables: []table{samplesTable(r.TransportErrorSamples)}}, len(r.TransportErrorSamples) > 0)
	add(countSection("Messages sent by the server", "method", r.ServerMethods), len(r.ServerMethods) > 0)
	if r.Child != nil {
		add(childSection(r.Child), true)
	}
	if r.Profile != nil && r.Profile.Name != "jsonrpc" {
		add(profileSection(r.Profile), true) // plain JSON-RPC has nothing to add, as in the text report
	}
	if r.IDReuse != nil {
		add(idReuseSection(r.IDReuse), true)
	}
	if r.Rounds != nil {
		add(roundsSection(r.Rounds), true)
	}
	if r.Diff != nil {
		add(diffSection(r.Diff), true)
	}
	add(shardSection(r), r.Shard != nil || len(r.MergedFrom) > 0 || r.Partial != nil)
	add(settingsSection(r), true)
	return d
}

// thresholdValue shows a measured figure or limit of a threshold in its
// figure's unit, as the threshold package writes it in verdicts.
func thresholdValue(figure string, v float64) string {
	s, _ := threshold.FormatValue(figure, v)
	return s
}

func thresholdSection(ts []stats.ThresholdVerdict) section {
	t := table{Head: []cell{txt("threshold"), txt("method"), txt("measured"), txt("limit"), txt("verdict"), txt("detail")}}
	failed := 0
	for _, v := range ts {
		method := v.Method
		if method == "" {
			method = "all"
		}
		verdict := cell{Text: "pass", Class: "pass"}
		if !v.Pass {
			verdict = cell{Text: "FAIL", Class: "fail"}
			failed++
		}
		t.Rows = append(t.Rows, []cell{{Text: v.Expr, Class: "key"}, txt(method), num(thresholdValue(v.Figure, v.Value)),
			num(thresholdValue(v.Figure, v.Limit)), verdict, txt(v.Detail)})
	}
	return section{Title: "Thresholds", Paras: []string{fmt.Sprintf("%d of %d passed.", len(ts)-failed, len(ts))}, Tables: []table{t}}
}

func soakSection(s *stats.SoakReport) section {
	sec := section{Title: "Soak", Paras: []string{s.Verdict}}
	if s.Grew {
		sec.Paras[0] = "GREW: " + s.Verdict
	}
	sec.Paras = append(sec.Paras, fmt.Sprintf("%d points, one every %s.", s.Points, fmtSeconds(s.IntervalS)))
	if len(s.Gauges) > 0 {
		sec.Tables = append(sec.Tables, gaugeTable(s.Gauges))
	}
	t := table{Head: []cell{txt("figure"), txt("per hour"), txt("R²"), txt("first (fitted)"), txt("last (fitted)")}}
	for _, g := range []struct {
		name string
		g    *stats.Growth
		show func(float64) string
	}{
		{"child RSS", s.ChildRSS, fmtBytes}, // (files of older versions: Gauges has it now)
		{"in flight", s.InFlight, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }},
		{"oldest pending", s.OldestPending, func(v float64) string { return fmtUs(int64(math.Round(v))) }},
		{"timed out unanswered", s.TimedOutUnanswered, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }},
	} {
		if g.g == nil || g.name == "child RSS" && len(s.Gauges) > 0 {
			continue
		}
		t.Rows = append(t.Rows, []cell{{Text: g.name, Class: "key"}, num(g.show(g.g.PerHour)), num(strconv.FormatFloat(g.g.R2, 'f', 3, 64)),
			num(g.show(g.g.First)), num(g.show(g.g.Last))})
	}
	if len(t.Rows) > 0 {
		sec.Tables = append(sec.Tables, t)
	}
	if s.HlogPath != "" {
		sec.Paras = append(sec.Paras, "Histogram log: "+s.HlogPath)
	}
	if s.SeriesPath != "" {
		sec.Paras = append(sec.Paras, "Series: "+s.SeriesPath)
	}
	return sec
}

func latencyTable(s stats.LatencySet) table {
	t := table{Head: []cell{txt(""), txt("count"), txt("min"), txt("mean"), txt("p50"), txt("p90"), txt("p95"), txt("p99"), txt("p99.9"), txt("max")}}
	for _, k := range []struct {
		name string
		l    stats.Latency
	}{{"corrected", s.Corrected}, {"service", s.Service}, {"lag", s.Lag}} {
		l := k.l
		row := []cell{{Text: k.name, Class: "key"}, num(fmtInt(l.Count))}
		if l.Count == 0 {
			for range len(t.Head) - 2 {
				row = append(row, dash())
			}
		} else {
			row = append(row, num(fmtUs(l.MinUs)), num(fmtUs(int64(math.Round(l.MeanUs)))), num(fmtUs(l.P50us)), num(fmtUs(l.P90us)),
				num(fmtUs(l.P95us)), num(fmtUs(l.P99us)), num(fmtUs(l.P999us)), num(fmtUs(l.MaxUs)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// methodSection is two tables, the requests' fates and the corrected
// latency, each narrow enough for a page: one table of both was wider than
// the page, and its latency columns went out of sight.
func methodSection(r *stats.Result) section {
	counts := table{Caption: "requests", Head: []cell{txt("method"), txt("sent"), txt("answered"), txt("ok"), txt("rpc err."), txt("invalid"),
		txt("transport"), txt("timeouts"), txt("err. rate"), txt("violations")}}
	latency := table{Caption: "corrected latency", Head: []cell{txt("method"), txt("count"),
		txt("p50"), txt("p90"), txt("p95"), txt("p99"), txt("p99.9"), txt("max")}}
	for _, name := range stats.SortedKeys(r.Methods) {
		m := r.Methods[name]
		q := m.Requests
		rate := dash()
		if f, ok := errorRate(q); ok {
			rate = num(fmtPercent(f))
			if f > 0 {
				rate.Class = "num fail"
			}
		}
		key := cell{Text: name, Class: "key name"}
		counts.Rows = append(counts.Rows, []cell{key, num(fmtCount(q.Sent)), num(fmtCount(q.Answered)), num(fmtCount(q.OK)),
			bad(q.RPCErrors), bad(q.InvalidReplies), bad(q.TransportErrors), bad(q.Timeouts), rate, bad(sum(m.Violations))})
		if name == stats.UnmatchedMethod {
			continue // replies without a request have no latency
		}
		l := m.Latency.Corrected
		latency.Rows = append(latency.Rows, []cell{key, num(fmtInt(l.Count)),
			latencyCell(l, l.P50us), latencyCell(l, l.P90us), latencyCell(l, l.P95us), latencyCell(l, l.P99us), latencyCell(l, l.P999us), latencyCell(l, l.MaxUs)})
	}
	note := "Counts of requests; transport = transport errors. Latency is corrected (reply − intended send time). Error rate = (rpc errors + invalid + transport errors + timeouts + leaked) / sent."
	if _, ok := r.Methods[stats.UnmatchedMethod]; ok {
		note += " " + stats.UnmatchedMethod + " holds replies that matched no request (unknown ids, duplicates, late replies)."
	}
	return section{Title: "Per method", Paras: []string{note}, Tables: []table{counts, latency}}
}

func errorCodeSection(r *stats.Result) section {
	codes := map[string]bool{}
	for c := range r.ErrorCodes {
		codes[c] = true
	}
	for c := range r.ErrorMessages {
		codes[c] = true
	}
	t := table{Head: []cell{txt("code"), txt("count"), txt("messages seen (the first distinct ones)")}}
	for _, c := range stats.SortedKeys(codes) {
		msgs := cell{}
		for _, m := range r.ErrorMessages[c] {
			msgs.Blocks = append(msgs.Blocks, block{Pre: m})
		}
		t.Rows = append(t.Rows, []cell{{Text: c, Class: "key"}, num(fmtCount(r.ErrorCodes[c])), msgs})
	}
	return section{Title: "Error codes", Tables: []table{t}}
}

func violationSection(r *stats.Result) section {
	t := table{Head: []cell{txt("rule"), txt("count"), txt("samples")}}
	for _, name := range stats.SortedKeys(r.Violations) {
		rule := cell{Text: name, Class: "key"}
		count := cell{Text: fmtCount(r.Violations[name]), Class: "num fail"}
		if rl, ok := check.ParseRule(name); ok && rl.Warning() {
			rule.Text += " (a warning: does not fail the run)"
			count.Class = "num warn"
		}
		samples := cell{}
		for _, s := range r.ViolationSamples[name] {
			label := "method " + s.Method
			if s.Note != "" {
				label += ": " + s.Note
			}
			samples.Blocks = append(samples.Blocks, block{Label: label, Pre: s.Frame})
		}
		t.Rows = append(t.Rows, []cell{rule, count, samples})
	}
	return section{Title: "Violations", Tables: []table{t}}
}

func samplesTable(samples []string) table {
	t := table{}
	for _, s := range samples {
		t.Rows = append(t.Rows, []cell{{Blocks: []block{{Pre: s}}}})
	}
	return t
}

func countSection(title, what string, m map[string]uint64) section {
	t := table{Head: []cell{txt(what), txt("count")}}
	for _, k := range stats.SortedKeys(m) {
		t.Rows = append(t.Rows, []cell{{Text: k, Class: "key"}, num(fmtCount(m[k]))})
	}
	return section{Title: title, Tables: []table{t}}
}

func childSection(c *stats.ChildReport) section {
	t := table{Rows: [][]cell{
		{{Text: "command", Class: "key"}, {Blocks: []block{{Pre: c.Command}}}},
		{{Text: "restarts", Class: "key"}, num(fmtInt(c.Restarts))},
	}}
	for _, x := range c.Exits {
		t.Rows = append(t.Rows, []cell{{Text: "exited", Class: "key"}, txt(x)})
	}
	if c.StderrPath != "" {
		t.Rows = append(t.Rows, []cell{{Text: "stderr written to", Class: "key"}, txt(c.StderrPath)})
	}
	if len(c.StderrTail) > 0 {
		t.Rows = append(t.Rows, []cell{{Text: "last stderr lines", Class: "key"}, {Blocks: []block{{Pre: strings.Join(c.StderrTail, "\n")}}}})
	}
	return section{Title: "Child process", Tables: []table{t}}
}

func profileSection(p *stats.ProfileReport) section {
	t := table{Rows: [][]cell{{{Text: "profile", Class: "key"}, txt(p.Name)}}}
	if p.Era != "" {
		t.Rows = append(t.Rows, []cell{{Text: "era", Class: "key"}, txt(p.Era + " (" + p.Version + ")")})
	}
	t.Rows = append(t.Rows,
		[]cell{{Text: "connections ready", Class: "key"}, num(fmtInt(p.Handshakes))},
		[]cell{{Text: "server requests answered", Class: "key"}, num(fmtInt(p.ServerRequestsAnswered))},
		[]cell{{Text: "cancellations sent", Class: "key"}, num(fmtInt(p.CancelsSent))})
	if len(p.Tools) > 0 {
		t.Rows = append(t.Rows, []cell{{Text: "tools listed", Class: "key"}, txt(strings.Join(p.Tools, ", "))})
	}
	return section{Title: "Profile", Tables: []table{t}}
}

func idReuseSection(u *stats.IDReuseReport) section {
	t := table{Rows: [][]cell{
		{{Text: "probes sent", Class: "key"}, num(fmtInt(u.Probes))},
		{{Text: "not sent (none in flight)", Class: "key"}, num(fmtInt(u.NoIDInFlight))},
		{{Text: "the id got two replies", Class: "key"}, num(fmtInt(u.BothAnswered))},
		{{Text: "one reply", Class: "key"}, num(fmtInt(u.OneReply))},
		{{Text: "no reply", Class: "key"}, num(fmtInt(u.NoReply))},
	}}
	for _, c := range stats.SortedKeys(u.ErrorCodes) {
		t.Rows = append(t.Rows, []cell{{Text: "error " + c + " drawn", Class: "key"}, num(fmtInt(u.ErrorCodes[c]))})
	}
	return section{Title: "Id reuse probe", Paras: []string{"Requests sent with the id of a request still in flight; not counted in the load."}, Tables: []table{t}}
}

func targetName(targets []string, i int) string {
	if i >= 0 && i < len(targets) {
		return targets[i]
	}
	return fmt.Sprintf("target %d", i+1)
}

func roundsSection(rr *stats.RoundsReport) section {
	sec := section{Title: "Rounds", Paras: []string{fmt.Sprintf("Targets run in alternation under the same load: %d, for %d rounds. Ratios are to the first target.", len(rr.Targets), rr.Rounds)}}
	ratios := table{Caption: "ratios", Head: []cell{txt("target"), txt("figure"), txt("median"), txt("min"), txt("max"), txt("within noise"), txt("verdict")}}
	for _, x := range rr.Ratios {
		noise := cell{Text: "no", Class: "warn"}
		if x.WithinNoise {
			noise = txt("yes")
		}
		median, lo, hi := fmt.Sprintf("%.3f×", x.Median), fmt.Sprintf("%.3f×", x.Min), fmt.Sprintf("%.3f×", x.Max)
		if x.BothZero || x.Rounds == 0 {
			median, lo, hi = stats.NoValue, stats.NoValue, stats.NoValue // zero against zero has no ratio
		}
		ratios.Rows = append(ratios.Rows, []cell{{Text: targetName(rr.Targets, x.Target), Class: "key"}, txt(x.Figure),
			num(median), num(lo), num(hi), noise, txt(x.Verdict)})
	}
	runs := table{Caption: "runs, in the order they ran", Head: []cell{txt("round"), txt("target"), txt("answered/s"), txt("p50"), txt("p95"), txt("p99"), txt("error rate")}}
	for _, x := range rr.Runs {
		runs.Rows = append(runs.Rows, []cell{num(strconv.Itoa(x.Round)), txt(targetName(rr.Targets, x.Target)), num(strconv.FormatFloat(x.AnsweredPS, 'f', 1, 64)),
			num(fmtUs(x.P50us)), num(fmtUs(x.P95us)), num(fmtUs(x.P99us)), num(fmtPercent(x.ErrorRate))})
	}
	sec.Tables = []table{ratios, runs}
	return sec
}

func diffSection(df *stats.DiffReport) section {
	sec := section{Title: "Differences between targets",
		Paras: []string{fmt.Sprintf("Requests compared between %s: %s; results that differed: %s.", strings.Join(df.Targets, " and "), fmtCount(df.Compared), fmtCount(df.Mismatches))}}
	if len(df.IgnorePaths) > 0 {
		sec.Paras = append(sec.Paras, "Paths ignored: "+strings.Join(df.IgnorePaths, ", "))
	}
	methods := table{Head: []cell{txt("method"), txt("compared"), txt("mismatches")}}
	for _, name := range stats.SortedKeys(df.Methods) {
		m := df.Methods[name]
		methods.Rows = append(methods.Rows, []cell{{Text: name, Class: "key"}, num(fmtCount(m.Compared)), bad(m.Mismatches)})
	}
	sec.Tables = append(sec.Tables, methods)
	if len(df.Samples) > 0 {
		a, b := "first target", "second target"
		if len(df.Targets) == 2 {
			a, b = df.Targets[0], df.Targets[1]
		}
		samples := table{Caption: "mismatches kept as examples", Head: []cell{txt("method"), txt("differs at"), txt("request and replies")}}
		for _, s := range df.Samples {
			samples.Rows = append(samples.Rows, []cell{{Text: s.Method, Class: "key"}, txt(strings.Join(s.Paths, ", ")),
				{Blocks: []block{{Label: "request", Pre: s.Request}, {Label: a, Pre: s.A}, {Label: b, Pre: s.B}}}})
		}
		sec.Tables = append(sec.Tables, samples)
	}
	return sec
}

func shardSection(r *stats.Result) section {
	sec := section{Title: "Shards"}
	if r.Shard != nil {
		sec.Paras = append(sec.Paras, fmt.Sprintf("This result is shard %d of %d.", r.Shard.Index, r.Shard.Count))
	}
	if len(r.MergedFrom) > 0 {
		t := table{Caption: "merged from", Head: []cell{txt("file"), txt("target"), txt("started"), txt("shard")}}
		for _, p := range r.MergedFrom {
			shard := dash()
			if p.Shard != nil {
				shard = num(fmt.Sprintf("%d/%d", p.Shard.Index, p.Shard.Count))
			}
			t.Rows = append(t.Rows, []cell{{Text: p.Path, Class: "key"}, txt(p.Target), txt(p.StartedAt), shard})
		}
		sec.Tables = append(sec.Tables, t)
	}
	if pt := r.Partial; pt != nil {
		sec.Paras = append(sec.Paras, "Partial: "+pt.Text()+"; the figures cover only the shards merged.")
		sec.Paras = append(sec.Paras, pt.Reasons...)
	}
	return sec
}

// settingsSection lists the run's settings as the result file records
// them: scalars inline, lists one element per line, as compact JSON.
func settingsSection(r *stats.Result) section {
	t := table{Head: []cell{txt("setting"), txt("value")}}
	t.Rows = append(t.Rows, []cell{{Text: "tool", Class: "key"}, txt(r.Tool)}, []cell{{Text: "schema", Class: "key"}, txt(r.Schema)})
	for _, k := range stats.SortedKeys(r.Settings) {
		t.Rows = append(t.Rows, []cell{{Text: k, Class: "key"}, settingCell(r.Settings[k])})
	}
	if r.ClampedValues > 0 {
		t.Rows = append(t.Rows, []cell{{Text: "clamped values", Class: "key"}, {Text: fmtCount(r.ClampedValues) + " latencies over 1 h were counted as 1 h", Class: "warn"}})
	}
	return section{Title: "Settings", Tables: []table{t}}
}

func settingCell(v any) cell {
	switch x := v.(type) {
	case string:
		return txt(x)
	case []any:
		if len(x) == 0 {
			return txt("[]")
		}
		lines := make([]string, len(x))
		for i, el := range x {
			lines[i] = compactJSON(el)
		}
		return cell{Blocks: []block{{Pre: strings.Join(lines, "\n")}}}
	case map[string]any:
		return cell{Blocks: []block{{Pre: compactJSON(x)}}}
	}
	return txt(compactJSON(v))
}

// compactJSON writes v as one line of JSON, with <, > and & as they are:
// the template escapes them, and the text should read as the file has it.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}
