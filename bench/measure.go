package main

// How one measurement is taken: running rpcload, wrk and vegeta on the load
// core, reading their figures, and storing them (or a note) per round. The
// comparisons in compare.go are built from these.

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// rpcloadRun runs `rpcload run ARGS` pinned to the load core and returns
// its result file. Violations do not fail the run (--allow-violations):
// they are reported as notes.
func (s *suite) rpcloadRun(ctx context.Context, timeout time.Duration, args ...string) (*rpcResult, cmdOut, error) {
	out := s.tmp("result.json")
	argv := append([]string{s.rpcload, "run"}, args...)
	argv = append(argv, "-q", "--allow-violations", "-o", out)
	co, err := s.run(ctx, cmdSpec{Argv: argv, CPU: s.loadCPU, Timeout: timeout})
	if err != nil {
		return nil, co, err
	}
	res, err := readResult(out)
	return res, co, err
}

// answeredPerSec is rpcload's throughput: replies per second of the
// sending phase.
func answeredPerSec(r *rpcResult) float64 {
	if r.DurationS <= 0 {
		return math.NaN()
	}
	return float64(r.Requests.Answered) / r.DurationS
}

// cpuPerReq is a tool's CPU time (user + system, the whole process) per
// reply in microseconds: what it costs to generate the load, which a busy
// machine disturbs far less than the rate.
func cpuPerReq(co cmdOut, replies float64) float64 {
	if replies <= 0 {
		return math.NaN()
	}
	return float64(co.CPU.Microseconds()) / replies
}

const cpuMetric = "CPU us/req"

// anomalies describes anything in a result that makes its figures suspect.
func anomalies(r *rpcResult) string {
	var a []string
	q := r.Requests
	if n := q.Sent - q.OK; q.Sent > 0 && n > 0 {
		a = append(a, fmt.Sprintf("%d of %d requests not ok (rpc errors %d, invalid %d, transport errors %d, timeouts %d, dropped %d)",
			n, q.Sent, q.RPCErrors, q.InvalidReplies, q.TransportErrors, q.Timeouts, q.Dropped))
	}
	if len(r.Violations) > 0 {
		a = append(a, fmt.Sprintf("violations %v", r.Violations))
	}
	return strings.Join(a, "; ")
}

// note adds a note to a section once.
func (sec *section) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	for _, x := range sec.Notes {
		if x == n {
			return
		}
	}
	sec.Notes = append(sec.Notes, n)
}

// noisyThreshold is the spread of rounds past which a goal's verdict
// carries a warning: the rounds disagree more than most goals' margins.
const noisyThreshold = 0.25

// noisy names the series whose rounds disagree by more than
// noisyThreshold, for a goal's note; "" when none does.
func (s *suite) noisy(keys ...seriesKey) string {
	var parts []string
	for _, k := range keys {
		if sp := spread(s.store.values(k)); !math.IsNaN(sp) && sp > noisyThreshold {
			parts = append(parts, fmt.Sprintf("%s %s %.0f%%", k.Tool, k.Metric, 100*sp))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "rounds disagree, spread: " + strings.Join(parts, ", ")
}

// serverCPUMetric is the shared reference server's CPU time per reply
// during one tool's run: whether the server, not the tool, set the pace.
const serverCPUMetric = "server CPU us/req"

// withServerCPU wraps a measurement against the shared server: it adds the
// server's CPU time per reply, the replies being the tool's req/s times
// the time the tool ran (so the figure is an estimate at /proc's 10 ms
// resolution).
func (s *suite) withServerCPU(d time.Duration, fn func() (map[string]float64, error)) func() (map[string]float64, error) {
	return func() (map[string]float64, error) {
		if s.srv == nil {
			return fn()
		}
		pid := s.srv.cmd.Process.Pid
		c0, ok0 := procCPU(pid)
		figs, err := fn()
		c1, ok1 := procCPU(pid)
		if err == nil && ok0 && ok1 && figs["req/s"] > 0 {
			figs[serverCPUMetric] = float64((c1 - c0).Microseconds()) / (figs["req/s"] * d.Seconds())
		}
		return figs, err
	}
}

// measure runs fn and stores its figures, or notes its error.
func (s *suite) measure(sec *section, comparison int, cas, tool string, round int, fn func() (map[string]float64, error)) {
	figs, err := fn()
	if err != nil {
		sec.note("%s, %s, round %d: %s", cas, tool, round, firstLine(err.Error()))
		s.logf("%s %s round %d: %v", cas, tool, round, err)
		return
	}
	keys := make([]string, 0, len(figs))
	for k := range figs {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the order of the report's rows
	for _, k := range keys {
		s.store.add(sample{Comparison: comparison, Case: cas, Tool: tool, Metric: k, Round: round, Value: figs[k]})
	}
}

func (s *suite) have(name string) bool { t := s.tools[name]; return t != nil && t.Path != "" }

func (s *suite) writeFile(name, content string) (string, error) {
	p := s.tmp(name)
	return p, os.WriteFile(p, []byte(content), 0o644)
}

// wrkScript makes wrk POST the echo request.
func (s *suite) wrkScript() (string, error) {
	return s.writeFile("post.lua", "wrk.method = \"POST\"\nwrk.body = '"+echoBody+"'\nwrk.headers[\"Content-Type\"] = \"application/json\"\n")
}

// vegetaTargets makes vegeta POST the echo request.
func (s *suite) vegetaTargets(url string) (string, error) {
	body, err := s.writeFile("body.json", echoBody)
	if err != nil {
		return "", err
	}
	return s.writeFile("targets.txt", "POST "+url+"\nContent-Type: application/json\n@"+body+"\n")
}

func secs(d time.Duration) string { return fmt.Sprintf("%gs", d.Seconds()) }

// runWrk runs wrk with one thread (the load core) and n connections, for
// d rounded up to whole seconds (all wrk accepts); its figure is a rate,
// so the length only changes how much it averages.
func (s *suite) runWrk(ctx context.Context, url, script string, conns int, d time.Duration) (wrkResult, cmdOut, error) {
	whole := (d + time.Second - 1) / time.Second
	co, err := s.run(ctx, cmdSpec{
		Argv: []string{s.tools["wrk"].Path, "-t1", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", whole), "-s", script, url},
		CPU:  s.loadCPU, Timeout: whole*time.Second + 30*time.Second,
	})
	if err != nil {
		return wrkResult{}, co, err
	}
	r, err := parseWrk(co.Stdout)
	if err != nil {
		return r, co, err
	}
	if r.Errors > 0 {
		return r, co, fmt.Errorf("wrk saw %d errors", r.Errors)
	}
	return r, co, nil
}

// vegetaAttack runs `vegeta attack` with args and returns its results file.
func (s *suite) vegetaAttack(ctx context.Context, targets string, d time.Duration, args ...string) (string, cmdOut, error) {
	bin := s.tmp("vegeta.bin")
	argv := append([]string{s.tools["vegeta"].Path, "attack", "-targets", targets, "-format", "http", "-duration", secs(d)}, args...)
	argv = append(argv, "-output", bin)
	co, err := s.run(ctx, cmdSpec{Argv: argv, CPU: s.loadCPU, Timeout: d + 60*time.Second})
	return bin, co, err
}

func (s *suite) vegetaReport(ctx context.Context, bin string) (vegetaReport, error) {
	co, err := s.run(ctx, cmdSpec{Argv: []string{s.tools["vegeta"].Path, "report", "-type", "json", bin}, CPU: -1, Timeout: time.Minute})
	if err != nil {
		return vegetaReport{}, err
	}
	return parseVegetaReport([]byte(co.Stdout))
}
