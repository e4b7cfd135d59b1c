package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// profileReport is one profiled side (rpcload or the server) of one load.
type profileReport struct {
	Load    string // what was running, e.g. "TCP, 1024 in flight, 4 conns"
	Side    string // "rpcload (engine in process)" or "reference server"
	Command string
	Report  profReport
	CPUTop  string // go tool pprof -top of the CPU profile
	CPUCum  string // the same sorted by cumulative time
	SpaceTop,
	ObjectsTop string // of the allocation profile, by bytes and by count
	Err string
}

// profileLoad is a load the suite can profile from both ends.
type profileLoad struct {
	name        string
	scheme      string // http or tcp
	concurrency int
	conns       int
	goals       []string // goal name prefixes whose failure calls for it
}

var profileLoads = []profileLoad{
	{"HTTP/1.1, 50 in flight, 50 conns", "http", 50, 50, []string{"HTTP closed loop"}},
	{"TCP, 1024 in flight, 4 conns", "tcp", 1024, 4, []string{"multiplexed tcp"}},
}

// profileMisses profiles the loads of the throughput goals that failed (or
// all of them with --profile always): rpcload's engine in process against
// the real server, then the server in process under the real rpcload.
func (s *suite) profileMisses(ctx context.Context) {
	if s.opt.profile == "never" {
		return
	}
	dir := filepath.Join(s.outDir, "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.notes = append(s.notes, "profiles: "+err.Error())
		return
	}
	d := 4 * time.Second
	if s.opt.quick {
		d = 2 * time.Second
	}
	for _, pl := range profileLoads {
		if ctx.Err() != nil {
			return
		}
		if s.opt.profile == "auto" && !s.failed(pl.goals) {
			continue
		}
		if s.srv == nil {
			continue // the comparisons that need the shared server did not run
		}
		tag := pl.scheme
		s.logf("profiling %s", pl.name)
		s.profiles = append(s.profiles, s.profileClient(ctx, pl, d, dir, tag), s.profileServer(ctx, pl, d, dir, tag))
	}
}

// failed reports whether a goal whose name starts with one of prefixes
// failed.
func (s *suite) failed(prefixes []string) bool {
	for _, g := range s.goals {
		for _, p := range prefixes {
			if strings.HasPrefix(g.Name, p) && g.Verdict == "FAIL" {
				return true
			}
		}
	}
	return false
}

func (s *suite) loadURL(scheme, httpAddr, tcpAddr string) string {
	if scheme == "http" {
		return "http://" + httpAddr + "/"
	}
	return "tcp://" + tcpAddr
}

func (s *suite) profileClient(ctx context.Context, pl profileLoad, d time.Duration, dir, tag string) profileReport {
	pr := profileReport{Load: pl.name, Side: "rpcload (its engine in process: bench profclient)"}
	cpu, allocs := filepath.Join(dir, "client-"+tag+".cpu.pprof"), filepath.Join(dir, "client-"+tag+".allocs.pprof")
	spec := cmdSpec{
		Argv: []string{s.self, "profclient", "--url", s.loadURL(pl.scheme, s.httpAddr, s.tcpAddr), "--concurrency", fmt.Sprint(pl.concurrency),
			"--conns", fmt.Sprint(pl.conns), "--duration", secs(d), "--cpuprofile", cpu, "--allocsprofile", allocs},
		CPU: s.loadCPU, Timeout: d + time.Minute,
	}
	pr.Command = s.display(spec)
	co, err := s.run(ctx, spec)
	if err == nil {
		err = json.Unmarshal([]byte(co.Stdout), &pr.Report)
	}
	if err != nil {
		pr.Err = err.Error()
		return pr
	}
	s.summarize(ctx, &pr)
	return pr
}

func (s *suite) profileServer(ctx context.Context, pl profileLoad, d time.Duration, dir, tag string) profileReport {
	pr := profileReport{Load: pl.name, Side: "reference server (testsrv in process: bench profserver, GOMAXPROCS=1)"}
	cpu, allocs := filepath.Join(dir, "server-"+tag+".cpu.pprof"), filepath.Join(dir, "server-"+tag+".allocs.pprof")
	report := s.tmp("profserver.json")
	spec := cmdSpec{
		Argv: []string{s.self, "profserver", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--cpuprofile", cpu, "--allocsprofile", allocs,
			"--report", report},
		Env: serverEnv, CPU: s.srvCPU,
	}
	pr.Command = s.display(spec)
	srv, addrs, err := s.startServing(ctx, spec, 2)
	if err != nil {
		pr.Err = err.Error()
		return pr
	}
	_, _, err = s.rpcloadRun(ctx, d+30*time.Second, s.loadURL(pl.scheme, addrs["http"], addrs["tcp"]), "--concurrency", fmt.Sprint(pl.concurrency),
		"--conns", fmt.Sprint(pl.conns), "--duration", secs(d), "--method", echoMethod, "--params", echoParams)
	s.stopDaemon(srv)
	if err != nil {
		pr.Err = err.Error()
		return pr
	}
	b, err := os.ReadFile(report)
	if err == nil {
		err = json.Unmarshal(b, &pr.Report)
	}
	if err != nil {
		pr.Err = err.Error()
		return pr
	}
	s.summarize(ctx, &pr)
	return pr
}

// summarize fills in the top functions of the profiles.
func (s *suite) summarize(ctx context.Context, pr *profileReport) {
	top := func(args ...string) string {
		argv := append([]string{"go", "tool", "pprof", "-top", "-nodecount=25"}, args...)
		co, err := s.run(ctx, cmdSpec{Argv: argv, CPU: -1, Timeout: time.Minute})
		if err != nil {
			return "pprof failed: " + firstLine(err.Error())
		}
		return trimPprof(co.Stdout)
	}
	pr.CPUTop = top(pr.Report.CPUProfile)
	pr.CPUCum = top("-cum", pr.Report.CPUProfile)
	pr.SpaceTop = top("-sample_index=alloc_space", pr.Report.AllocsProfile)
	pr.ObjectsTop = top("-sample_index=alloc_objects", pr.Report.AllocsProfile)
}

// trimPprof drops pprof's preamble lines (file, build id, type, time) and
// keeps the duration, the summary lines and the table.
func trimPprof(out string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "File:"), strings.HasPrefix(l, "Build ID:"), strings.HasPrefix(l, "Type:"),
			strings.HasPrefix(l, "Time:"):
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
