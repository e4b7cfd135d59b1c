package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// analysisFile is hand-written commentary on the profiles that the report
// includes as it is: what limits a goal that is missed is a judgement the
// suite cannot make, and keeping it in a file of its own lets the report
// be regenerated without losing it.
const analysisFile = "bench/analysis.md"

// markdown renders the whole report.
func (s *suite) markdown() string {
	var b strings.Builder
	s.writeIntro(&b)
	s.writeMachine(&b)
	s.writeGoals(&b)
	s.writeSections(&b)
	s.writeProfiles(&b)
	s.writeMicroAndNotes(&b)
	return b.String()
}

// writeIntro writes the title, the run's mode and load, and how to
// reproduce it.
func (s *suite) writeIntro(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	mode := fmt.Sprintf("full, %d round%s", s.opt.rounds, plural(s.opt.rounds))
	if s.opt.quick {
		mode = fmt.Sprintf("--quick, %d round%s of short runs: a smoke test, not a measurement", s.opt.rounds, plural(s.opt.rounds))
	}
	p("# Benchmarks\n\n")
	p("<!-- Written by `go run ./bench` (bench/report.go); edit the suite or %s, not this file. -->\n\n", analysisFile)
	p("Written by `go run ./bench` on %s (%s; %s in all).\n\n", s.started.UTC().Format("2006-01-02 15:04 MST"), mode, time.Since(s.started).Round(time.Second))
	p("Load average (1, 5, 15 min) at the start: %s; at the end: %s. %s This machine has %d cores and is shared: "+
		"anything else running on it (other builds and tests) runs on the same cores as the server and the load tool, "+
		"so absolute numbers move from run to run. Ratios are taken within a round, where the tools ran seconds apart, "+
		"which cancels most of that drift.\n\n", s.machine.loadStart, s.machine.loadEnd, quietMachine(s.machine.loadStart), s.machine.cpus)
	if len(s.opt.only) > 0 {
		var only []string
		for n := 1; n <= numComparisons; n++ {
			if s.opt.only[n] {
				only = append(only, fmt.Sprint(n))
			}
		}
		p("Only comparisons %s were run (--only).\n\n", strings.Join(only, ", "))
	}

	p("## Reproduce\n\n```sh\ngo run ./bench            # everything: about %s\ngo run ./bench --quick    # one short round of everything (a smoke test of the suite)\ngo run ./bench --only 3,4 # some comparisons\n```\n\n",
		"9 minutes")
	pinning := fmt.Sprintf("pins it to core %d and every load tool to core %d with taskset", s.srvCPU, s.loadCPU)
	if s.srvCPU < 0 {
		pinning = "pins nothing (no taskset, fewer than 2 cores, or --no-pin)"
	}
	p("The suite installs what is missing (the first time, about a minute): wrk from Debian's packages (apt-get, as root), "+
		"vegeta and hey with `go install` at pinned versions into bench/.tools. A tool that cannot be installed is skipped with a note. "+
		"It builds rpcload (and rpcfuzz, for comparison 7) from this tree, starts the reference server (`rpcload serve`) with GOMAXPROCS=1, "+
		"%s, runs the tools in alternation (A B C, A B C, ...) "+
		"so drift falls on all of them alike, and prints and writes the medians, the ratios and a verdict per goal. "+
		"Everything listens on 127.0.0.1; every process it starts is stopped by its id when it ends, on an error or on Ctrl-C.\n\n", pinning)
}

// quietLoad is the 1-minute load average under which the machine counts
// as quiet when the suite starts.
const quietLoad = 0.5

// quietMachine says whether the machine was quiet at the start, from the
// load averages readLoadAvg returned ("1min 5min 15min").
func quietMachine(loadavg string) string {
	f := strings.Fields(loadavg)
	var one float64
	if len(f) == 0 {
		return "Whether the machine was quiet is not known (no load average)."
	} else if _, err := fmt.Sscan(f[0], &one); err != nil {
		return "Whether the machine was quiet is not known (no load average)."
	}
	if one < quietLoad {
		return fmt.Sprintf("The 1-minute load average at the start, %s, was under %g: a quiet machine.", f[0], quietLoad)
	}
	return fmt.Sprintf("This was not a quiet machine: the 1-minute load average at the start was %s, not under %g, "+
		"so other work was running on the cores the server and the load tools use, and the rates below are lower and noisier "+
		"than a quiet machine's (the CPU time per reply, and ratios within a round, are steadier).", f[0], quietLoad)
}

// writeMachine writes the machine, the versions and the pinning.
func (s *suite) writeMachine(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("## Machine and versions\n\n")
	rows := [][]string{
		{"CPU", s.machine.cpuModel}, {"cores", fmt.Sprint(s.machine.cpus)}, {"memory", s.machine.memory},
		{"kernel", s.machine.kernel}, {"OS", s.machine.os}, {"Go", s.machine.goVersion},
		{"rpcload", s.rpcloadVersion()},
	}
	for _, name := range []string{"wrk", "vegeta", "hey"} {
		t := s.tools[name]
		if t == nil {
			continue
		}
		v := t.Version
		if t.Path == "" {
			v = "skipped"
		}
		rows = append(rows, []string{name, v + " (" + t.Note + ")"})
	}
	pin := fmt.Sprintf("server on core %d (GOMAXPROCS=1), load tools on core %d", s.srvCPU, s.loadCPU)
	if s.srvCPU < 0 {
		pin = "none (server GOMAXPROCS=1)"
	}
	rows = append(rows, []string{"pinning", pin})
	b.WriteString(table{Head: []string{"", ""}, Rows: rows}.markdown())
	b.WriteString("\n")
}

// writeGoals writes the verdict per goal and the hand-written analysis.
func (s *suite) writeGoals(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("## Goals\n\n")
	b.WriteString(s.goalsTable().markdown())
	b.WriteString("\nA ratio is the median over rounds of the per-round ratio. FAIL means the goal was missed in this run; ")
	b.WriteString("where that is rpcload's or the server's own cost, the profiles below say where it goes.\n\n")
	if a, err := os.ReadFile(filepath.Join(s.root, analysisFile)); err == nil {
		p("## Analysis\n\n%s\n\n", strings.TrimSpace(string(a)))
	}
}

// writeSections writes each comparison that ran.
func (s *suite) writeSections(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	for n := 1; n <= numComparisons; n++ {
		sec := s.sections[n]
		if sec == nil || !sec.ran {
			continue
		}
		p("## %d. %s\n\n%s\n\n", n, sec.Title, sec.Intro)
		if t := s.store.mediansTable(n); len(t.Rows) > 0 {
			p("Every round's value, the median, and the spread ((max - min) / median):\n\n%s\n", t.markdown())
		}
		for _, nt := range sec.Tables {
			p("%s:\n\n%s\n", nt.Name, nt.Table.markdown())
		}
		for _, pt := range sec.Pre {
			p("%s:\n\n```\n%s\n```\n\n", pt.Name, pt.Text)
		}
		for _, note := range sec.Notes {
			p("- %s\n", note)
		}
		if len(sec.Notes) > 0 {
			b.WriteString("\n")
		}
		if len(sec.Commands) > 0 {
			p("Commands (`rpcload`, `rpcfuzz` and `bench` are the binaries built from this tree; $WORK is a scratch directory):\n\n```text\n%s\n```\n\n", strings.Join(sec.Commands, "\n"))
		}
	}
}

// writeProfiles writes the profiles taken under the throughput loads.
func (s *suite) writeProfiles(b *strings.Builder) {
	if len(s.profiles) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("## Profiles\n\n")
	p("Taken under the loads of the throughput goals (with --profile auto, only where one failed). rpcload's side runs its engine in process " +
		"(the code `rpcload run` runs) under pprof against the real server; the server's side runs the reference " +
		"server's package in process (the code `rpcload serve` runs) under pprof, loaded by the real rpcload binary. " +
		"Allocations per request are exact (runtime.MemStats over the run); the tables are sampled. " +
		"The profile files are in bench/.out/profiles.\n\n")
	for _, pr := range s.profiles {
		p("### %s: %s\n\n", pr.Load, pr.Side)
		p("`%s`\n\n", pr.Command)
		if pr.Err != "" {
			p("Failed: %s\n\n", pr.Err)
			continue
		}
		p("%s req/s under the profiler; %.2f allocations and %s bytes allocated per request.\n\n",
			fmtNum(pr.Report.ReqPerS), pr.Report.AllocsPerReq, fmtNum(pr.Report.BytesPerReq))
		p("CPU, by own time:\n\n```\n%s\n```\n\nCPU, by cumulative time:\n\n```\n%s\n```\n\n", pr.CPUTop, pr.CPUCum)
		p("Allocated bytes:\n\n```\n%s\n```\n\nAllocated objects:\n\n```\n%s\n```\n\n", pr.SpaceTop, pr.ObjectsTop)
	}
}

// writeMicroAndNotes writes the Go micro-benchmarks and the notes about the
// whole run.
func (s *suite) writeMicroAndNotes(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	if s.microCmd != "" {
		p("## Go micro-benchmarks of the hot path\n\n`%s`\n\n", s.microCmd)
		if s.microErr != "" {
			p("The run reported an error: %s\n\n", s.microErr)
		}
		b.WriteString(microTable(s.micro).markdown())
		b.WriteString("\n")
	}

	if len(s.notes) > 0 {
		p("## Notes\n\n")
		for _, n := range s.notes {
			p("- %s\n", n)
		}
		b.WriteString("\n")
	}
}

// rpcloadVersion names the tree rpcload was built from.
func (s *suite) rpcloadVersion() string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rev := buildSetting(ctx, s.rpcload, "vcs.revision")
	if rev == "" {
		return "built from this tree"
	}
	v := "built from this tree at " + rev
	if buildSetting(ctx, s.rpcload, "vcs.modified") == "true" {
		v += " with uncommitted changes"
	}
	return v
}
