package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// suite is one run of the benchmark suite.
type suite struct {
	opt    options
	dur    durations
	stdout io.Writer
	log    io.Writer

	root    string // repository root (holds go.mod)
	work    string // scratch directory of this run
	outDir  string // bench/.out: kept artefacts (profiles, raw samples)
	procs   *procs
	taskset string // path of taskset, "" when not pinning
	srvCPU  int    // core of the reference server (-1: not pinned)
	loadCPU int    // core of the load tools (-1: not pinned)

	rpcload string // the rpcload binary built from this tree
	rpcfuzz string // the rpcfuzz binary built from this tree ("" unless comparison 7 runs)
	self    string // this binary, for its internal modes
	tools   map[string]*tool

	srv      *daemon // the shared reference server
	httpAddr string
	tcpAddr  string

	started  time.Time
	machine  machineInfo
	store    store
	goals    []goal
	sections map[int]*section
	micro    []goBench
	microCmd string
	microErr string
	profiles []profileReport
	notes    []string // about the whole run

	recording int // the comparison the commands run now belong to (0: none)
	seq       int // numbers scratch files
}

// goal is one line of the verdict table.
type goal struct {
	Comparison int
	Name       string
	Target     string
	Measured   string
	Verdict    string // PASS, FAIL or SKIP
	Note       string
}

// section collects what one comparison reports besides its samples.
type section struct {
	Title    string
	Intro    string
	Tables   []namedTable
	Pre      []namedText // preformatted blocks (profiles)
	Notes    []string
	Commands []string
	ran      bool
}

type namedTable struct {
	Name  string
	Table table
}

type namedText struct {
	Name, Text string
}

func newSuite(opt options, stdout, stderr io.Writer) (*suite, error) {
	root, err := findRoot()
	if err != nil {
		return nil, err
	}
	s := &suite{
		opt: opt, dur: opt.durations(), stdout: stdout, log: stderr, root: root,
		procs: newProcs(), srvCPU: -1, loadCPU: -1, tools: map[string]*tool{},
		sections: map[int]*section{}, started: time.Now(),
	}
	s.outDir = filepath.Join(root, "bench", ".out")
	if err := os.MkdirAll(s.outDir, 0o755); err != nil {
		return nil, err
	}
	if s.work, err = os.MkdirTemp("", "rpcload-bench-"); err != nil {
		return nil, err
	}
	if s.self, err = os.Executable(); err != nil {
		return nil, err
	}
	return s, nil
}

// findRoot walks up from the working directory to the module's go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/rpcload/rpcload\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the suite from inside the rpcload repository (no go.mod of github.com/rpcload/rpcload above the working directory)")
		}
		dir = parent
	}
}

// close stops whatever is still running and removes the scratch directory.
func (s *suite) close() {
	s.stopDaemon(s.srv)
	s.srv = nil
	s.procs.killAll(3 * time.Second)
	if s.opt.keep {
		fmt.Fprintf(s.log, "bench: work directory kept: %s\n", s.work)
		return
	}
	_ = os.RemoveAll(s.work)
}

func (s *suite) logf(format string, a ...any) {
	fmt.Fprintf(s.log, "bench: "+format+"\n", a...)
}

// section returns comparison n's section, creating it.
func (s *suite) section(n int) *section {
	sec := s.sections[n]
	if sec == nil {
		sec = &section{}
		s.sections[n] = sec
	}
	return sec
}

// logCmd prints a command as it starts and records its display form once
// in the current comparison's section.
func (s *suite) logCmd(spec cmdSpec) {
	line := s.display(spec)
	fmt.Fprintf(s.log, "  $ %s\n", line)
	if s.recording == 0 {
		return
	}
	sec := s.section(s.recording)
	for _, c := range sec.Commands {
		if c == line {
			return
		}
	}
	sec.Commands = append(sec.Commands, line)
}

// display renders a command as a reader could type it: binaries by name,
// scratch paths as $WORK, arguments quoted for a POSIX shell.
func (s *suite) display(spec cmdSpec) string {
	parts := append([]string(nil), spec.Env...)
	for _, a := range s.pinned(spec.Argv, spec.CPU) {
		switch {
		case a == s.rpcload:
			a = "rpcload"
		case s.rpcfuzz != "" && a == s.rpcfuzz:
			a = "rpcfuzz"
		case a == s.self:
			a = "bench"
		case s.taskset != "" && a == s.taskset:
			a = "taskset"
		}
		if s.outDir != "" {
			a = strings.ReplaceAll(a, s.outDir, "bench/.out")
		}
		a = strings.ReplaceAll(a, s.work, "$WORK")
		a = strings.ReplaceAll(a, filepath.Join(s.root, "bench", ".tools")+"/", "bench/.tools/")
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(a string) string {
	if a == "" {
		return "''"
	}
	if strings.IndexFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%$", r))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// runAll sets up, runs the chosen comparisons, profiles, runs the
// micro-benchmarks and writes the report. A comparison that fails is
// reported and the suite goes on; only setup errors and interrupts stop it.
func (s *suite) runAll(ctx context.Context) error {
	if err := s.setup(ctx); err != nil {
		return err
	}
	steps := []struct {
		n  int
		fn func(context.Context) error
	}{
		{1, s.compareHTTPClosed}, {2, s.compareOpenLoop}, {3, s.compareMux},
		{4, s.compareStall}, {5, s.compareMemory}, {6, s.compareResolution}, {7, s.compareFuzz},
	}
	for _, st := range steps {
		if !s.opt.runs(st.n) {
			continue
		}
		s.recording = st.n
		sec := s.section(st.n)
		sec.ran = true
		t0 := time.Now()
		err := st.fn(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			s.logf("comparison %d failed: %v", st.n, err)
			sec.Notes = append(sec.Notes, "The comparison stopped with an error: "+err.Error())
		}
		s.logf("comparison %d took %s", st.n, time.Since(t0).Round(time.Second))
		s.printComparison(st.n)
	}
	s.recording = 0
	s.profileMisses(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !s.opt.noMicro {
		s.runMicro(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	s.machine.loadEnd = readLoadAvg()
	s.printGoals()
	return s.writeOutputs()
}

// setup builds rpcload, installs or finds the tools, decides the pinning
// and starts the shared reference server.
func (s *suite) setup(ctx context.Context) error {
	s.machine = readMachine()
	s.logf("machine: %s, %d CPUs, load average %s", s.machine.cpuModel, s.machine.cpus, s.machine.loadStart)
	s.logf("%s", quietMachine(s.machine.loadStart))
	if !s.opt.noPin && runtime.NumCPU() >= 2 {
		if p, err := exec.LookPath("taskset"); err == nil {
			s.taskset, s.srvCPU, s.loadCPU = p, 0, 1
		} else {
			s.notes = append(s.notes, "taskset was not found: the server and the load tools were not pinned to cores.")
		}
	} else if !s.opt.noPin {
		s.notes = append(s.notes, "Fewer than 2 CPUs are available: the server and the load tools share them, unpinned.")
	}
	s.rpcload = filepath.Join(s.work, "rpcload")
	s.logf("building rpcload")
	if _, err := s.run(ctx, cmdSpec{Argv: []string{"go", "build", "-o", s.rpcload, "./cmd/rpcload"}, Dir: s.root, CPU: -1, Timeout: 5 * time.Minute}); err != nil {
		return err
	}
	if s.opt.runs(7) {
		s.rpcfuzz = filepath.Join(s.work, "rpcfuzz")
		s.logf("building rpcfuzz")
		if _, err := s.run(ctx, cmdSpec{Argv: []string{"go", "build", "-o", s.rpcfuzz, "./cmd/rpcfuzz"}, Dir: s.root, CPU: -1, Timeout: 5 * time.Minute}); err != nil {
			return err
		}
	}
	s.findTools(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if s.needsSharedServer() {
		d, addrs, err := s.startServer(ctx, []string{"--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"})
		if err != nil {
			return fmt.Errorf("starting the reference server: %w", err)
		}
		s.srv, s.httpAddr, s.tcpAddr = d, addrs["http"], addrs["tcp"]
	}
	return nil
}

func (s *suite) needsSharedServer() bool {
	for _, n := range []int{1, 2, 3, 5, 6} {
		if s.opt.runs(n) {
			return true
		}
	}
	return false
}

// serverEnv is the reference server's environment: one P, as the issue
// asks, so the server's cost per request shows and does not hide behind a
// second core.
var serverEnv = []string{"GOMAXPROCS=1"}

// startServer starts `rpcload serve ARGS` pinned to the server's core and
// returns the addresses it printed, by scheme (http, tcp).
func (s *suite) startServer(ctx context.Context, args []string) (*daemon, map[string]string, error) {
	argv := append([]string{s.rpcload, "serve"}, args...)
	listeners := 0
	for _, a := range args {
		if a == "--http" || a == "--tcp" {
			listeners++
		}
	}
	return s.startServing(ctx, cmdSpec{Argv: argv, Env: serverEnv, CPU: s.srvCPU}, listeners)
}

// startServing starts a process that prints "serving ... on URL" lines
// (rpcload serve, or this binary's profserver) and waits for want of them.
func (s *suite) startServing(ctx context.Context, spec cmdSpec, want int) (*daemon, map[string]string, error) {
	d, err := s.startDaemon(spec)
	if err != nil {
		return nil, nil, err
	}
	addrs := map[string]string{}
	err = d.waitLines(ctx, 15*time.Second, func(line string) bool {
		_, u, ok := strings.Cut(line, " on ")
		if !ok || !strings.HasPrefix(line, "serving ") {
			return false
		}
		scheme, rest, _ := strings.Cut(u, "://")
		host, _, _ := strings.Cut(rest, "/")
		if _, seen := addrs[scheme]; !seen && (scheme == "http" || scheme == "tcp") {
			addrs[scheme] = host
		}
		return len(addrs) >= want
	})
	if err != nil {
		s.stopDaemon(d)
		return nil, nil, err
	}
	return d, addrs, nil
}

// readResult reads an rpcload result file.
func readResult(path string) (*rpcResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r rpcResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// tmp returns a fresh path in the scratch directory.
func (s *suite) tmp(name string) string {
	s.seq++
	return filepath.Join(s.work, fmt.Sprintf("%03d-%s", s.seq, name))
}

// addGoal records a verdict.
func (s *suite) addGoal(g goal) { s.goals = append(s.goals, g) }

// printComparison prints the medians and ratios of one comparison.
func (s *suite) printComparison(n int) {
	sec := s.section(n)
	fmt.Fprintf(s.stdout, "\n== %d. %s\n", n, sec.Title)
	if t := s.store.mediansTable(n); len(t.Rows) > 0 {
		fmt.Fprint(s.stdout, t.text())
	}
	for _, nt := range sec.Tables {
		fmt.Fprintf(s.stdout, "\n%s\n%s", nt.Name, nt.Table.text())
	}
	for _, pt := range sec.Pre {
		fmt.Fprintf(s.stdout, "\n%s\n%s\n", pt.Name, pt.Text)
	}
	for _, note := range sec.Notes {
		fmt.Fprintf(s.stdout, "note: %s\n", note)
	}
}

func (s *suite) printGoals() {
	fmt.Fprintf(s.stdout, "\n== Goals\n%s", s.goalsTable().text())
}

func (s *suite) goalsTable() table {
	t := table{Head: []string{"#", "goal", "target", "measured", "verdict"}}
	gs := append([]goal(nil), s.goals...)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Comparison < gs[j].Comparison })
	for _, g := range gs {
		m := g.Measured
		if g.Note != "" {
			m += " (" + g.Note + ")"
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(g.Comparison), g.Name, g.Target, m, g.Verdict})
	}
	return t
}

func verdict(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}

// writeOutputs writes the Markdown report and the raw samples.
func (s *suite) writeOutputs() error {
	if s.opt.jsonOut != "-" {
		p := s.abs(s.opt.jsonOut)
		b, _ := json.MarshalIndent(struct {
			Samples []sample `json:"samples"`
			Goals   []goal   `json:"goals"`
		}{s.store.samples, s.goals}, "", "  ")
		if err := writeFileAtomic(p, b); err != nil {
			return err
		}
		s.logf("samples written to %s", p)
	}
	if s.opt.out == "-" {
		return nil
	}
	p := s.abs(s.opt.out)
	if err := writeFileAtomic(p, []byte(s.markdown())); err != nil {
		return err
	}
	s.logf("report written to %s (%s in all)", p, time.Since(s.started).Round(time.Second))
	return nil
}

func (s *suite) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.root, p)
}

// writeFileAtomic writes through a temporary file in the same directory,
// so an interrupted suite never leaves half a report.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".bench-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
