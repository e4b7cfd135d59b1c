package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procs keeps every process the suite started, so that an error or a
// signal ends exactly those, by their ids, and nothing else on the machine.
// Each child leads a process group of its own (pgid = its pid): signalling
// -pid then also reaches what it started itself (go test's test binaries),
// and a Ctrl-C on the terminal reaches only the suite, which stops the rest.
type procs struct {
	mu   sync.Mutex
	live map[int]*exec.Cmd
}

func newProcs() *procs { return &procs{live: map[int]*exec.Cmd{}} }

// start starts cmd in its own process group and registers it.
func (p *procs) start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live == nil {
		return errors.New("shutting down")
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	p.live[cmd.Process.Pid] = cmd
	return nil
}

// done unregisters a process that has been waited for.
func (p *procs) done(cmd *exec.Cmd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != nil && cmd.Process != nil {
		delete(p.live, cmd.Process.Pid)
	}
}

// signal sends sig to the process group the child leads.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig) // it may have exited already
}

// killAll ends every registered process: SIGTERM, then SIGKILL after
// grace for those still there. Later starts are refused.
func (p *procs) killAll(grace time.Duration) {
	p.mu.Lock()
	live := p.live
	p.live = nil
	p.mu.Unlock()
	for _, c := range live {
		signalGroup(c, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for _, c := range live {
		// The goroutine that waits for each child reaps it, after which
		// kill 0 fails: only those still running get SIGKILL.
		for time.Now().Before(deadline) && syscall.Kill(c.Process.Pid, 0) == nil {
			time.Sleep(20 * time.Millisecond)
		}
		if syscall.Kill(c.Process.Pid, 0) == nil {
			signalGroup(c, syscall.SIGKILL)
		}
	}
}

// cmdSpec describes one process the suite runs.
type cmdSpec struct {
	Argv    []string
	Env     []string // added to the suite's environment
	CPU     int      // pin to this core with taskset; -1: no pinning
	Timeout time.Duration
	Dir     string
	Stdin   io.Reader
}

// cmdOut is what a finished process left.
type cmdOut struct {
	Stdout, Stderr string
	MaxRSSKiB      int64         // peak resident set of the process (getrusage), KiB
	CPU            time.Duration // user + system time of the process
	Elapsed        time.Duration
}

// pinned prefixes argv with taskset when cpu >= 0 and taskset exists.
func (s *suite) pinned(argv []string, cpu int) []string {
	if cpu < 0 || s.taskset == "" {
		return argv
	}
	return append([]string{s.taskset, "-c", fmt.Sprint(cpu)}, argv...)
}

// command builds the exec.Cmd of spec.
func (s *suite) command(spec cmdSpec) *exec.Cmd {
	argv := s.pinned(spec.Argv, spec.CPU)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdin = spec.Stdin
	return cmd
}

// run runs spec to its end, or stops it when ctx ends or its timeout
// passes; a non-zero exit is an error that carries the end of stderr.
func (s *suite) run(ctx context.Context, spec cmdSpec) (cmdOut, error) {
	cmd := s.command(spec)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	s.logCmd(spec)
	t0 := time.Now()
	if err := s.procs.start(cmd); err != nil {
		return cmdOut{}, fmt.Errorf("%s: %w", spec.Argv[0], err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		signalGroup(cmd, syscall.SIGTERM)
		err = waitOrKill(cmd, waited)
		err = errors.Join(ctx.Err(), err)
	case <-timer.C:
		signalGroup(cmd, syscall.SIGTERM)
		_ = waitOrKill(cmd, waited)
		err = fmt.Errorf("%s did not finish within %s", spec.Argv[0], timeout)
	}
	s.procs.done(cmd)
	res := cmdOut{Stdout: out.String(), Stderr: errb.String(), Elapsed: time.Since(t0)}
	if st := cmd.ProcessState; st != nil {
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSSKiB = ru.Maxrss
		}
		res.CPU = st.UserTime() + st.SystemTime()
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w: %s", strings.Join(spec.Argv, " "), err, tail(strings.TrimSpace(res.Stderr), 400))
	}
	return res, nil
}

// waitOrKill waits a little for a signalled child, then kills its group.
func waitOrKill(cmd *exec.Cmd, waited <-chan error) error {
	select {
	case err := <-waited:
		return err
	case <-time.After(3 * time.Second):
		signalGroup(cmd, syscall.SIGKILL)
		return <-waited
	}
}

// daemon is a long-running child (a reference server) whose stdout the
// suite reads line by line.
type daemon struct {
	cmd    *exec.Cmd
	lines  chan string
	waited chan error
	stderr *bytes.Buffer
	mu     sync.Mutex // guards stderr against the copying goroutine
}

// startDaemon starts spec and returns once it is running.
func (s *suite) startDaemon(spec cmdSpec) (*daemon, error) {
	cmd := s.command(spec)
	d := &daemon{cmd: cmd, lines: make(chan string, 64), waited: make(chan error, 1), stderr: &bytes.Buffer{}}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = lockedWriter{&d.mu, d.stderr}
	s.logCmd(spec)
	if err := s.procs.start(cmd); err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Argv[0], err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case d.lines <- sc.Text():
			default: // nobody is reading any more; keep draining the pipe
			}
		}
		close(d.lines)
		d.waited <- cmd.Wait()
	}()
	return d, nil
}

// waitLines reads stdout lines until have says it has what it needs.
func (d *daemon) waitLines(ctx context.Context, timeout time.Duration, have func(line string) bool) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case line, ok := <-d.lines:
			if !ok {
				return fmt.Errorf("exited early: %s", d.stderrTail())
			}
			if have(line) {
				return nil
			}
		case <-t.C:
			return fmt.Errorf("not ready after %s: %s", timeout, d.stderrTail())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (d *daemon) stderrTail() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return tail(strings.TrimSpace(d.stderr.String()), 400)
}

// stop ends the daemon (SIGTERM, then SIGKILL) and unregisters it.
func (s *suite) stopDaemon(d *daemon) {
	if d == nil {
		return
	}
	signalGroup(d.cmd, syscall.SIGTERM)
	select {
	case <-d.waited:
	case <-time.After(5 * time.Second):
		signalGroup(d.cmd, syscall.SIGKILL)
		<-d.waited
	}
	s.procs.done(d.cmd)
}

// lockedWriter serialises writes to a buffer that is also read.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// clockTicks is the unit of the CPU times in /proc/PID/stat (USER_HZ,
// 100 on every Linux the suite runs on).
const clockTicks = 100

// procCPU reads a process's user + system CPU time from /proc; ok is false
// where /proc is not there.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	return parseProcStatCPU(string(b))
}

// parseProcStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/PID/stat line; the command name in parentheses may hold spaces, so
// fields are counted from the last ')'.
func parseProcStatCPU(stat string) (time.Duration, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, false
	}
	var ut, st int64
	if _, err := fmt.Sscan(f[11], &ut); err != nil {
		return 0, false
	}
	if _, err := fmt.Sscan(f[12], &st); err != nil {
		return 0, false
	}
	return time.Duration(ut+st) * time.Second / clockTicks, true
}
