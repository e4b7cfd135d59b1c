package fuzz

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/procstat"
	"github.com/rpcload/rpcload/internal/transport"
)

// freeAddr returns a 127.0.0.1 address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// dyingServer is the command and options of this test binary as an HTTP
// server on addr that the planted null_batch bug ends ([null] kills it).
func dyingServer(addr string) ([]string, transport.ChildOptions) {
	return []string{os.Args[0], "-test.run=^$"},
		transport.ChildOptions{Env: []string{childEnv + "=http=" + addr + "/" + fuzztarget.NullBatch.String()}, Grace: time.Second}
}

func accepts(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// TestServerCommandCrash: rpcfuzz starts a network server that dies on
// the six bytes [null], restarts it after each crash, confirms and
// minimizes the crash against fresh processes (to at most 16 bytes, the
// process's panic as its key), records the command so that replay starts
// it again, and ends the process it started last.
func TestServerCommandCrash(t *testing.T) {
	addr := freeAddr(t)
	argv, child := dyingServer(addr)
	tg, err := transport.ParseTarget("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: tg, ServerCommand: argv, Child: child, Workers: 2, Execs: 20000, Duration: 2 * time.Minute, Seed: 1,
		// (A timeout well above the time a process takes to die on a
		// loaded machine: a crash the client gave up on first is a hang.)
		OutDir: t.TempDir(), Timeout: 5 * time.Second, StopAfter: 1, MinimizeBudget: 300, MinimizeTime: 30 * time.Second,
		Now: func() time.Time { return time.Unix(1, 0) }}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if accepts(addr) {
		t.Error("the server process still accepts connections after the run")
	}
	if len(s.Findings) != 1 {
		t.Fatalf("findings %+v", s.Findings)
	}
	f := s.Findings[0]
	t.Logf("execs %d, restarts %d: %s: %d -> %d bytes, %d checks", s.Execs, s.Restarts, f.ID, f.InputBytes, f.MinimizedBytes, f.Minimize.Checks)
	if want := "crash|stderr:panic: fuzztarget: planted bug null_batch"; f.Key != want {
		t.Errorf("key %q, want %q", f.Key, want)
	}
	if s.Restarts < 1 {
		t.Errorf("restarts %d: the crash was confirmed against the process it killed?", s.Restarts)
	}
	in, err := os.ReadFile(filepath.Join(f.Dir, "input.bin"))
	if err != nil || len(in) > 16 || f.MinimizedBytes > 16 || !f.Minimize.Reproduced {
		t.Errorf("input.bin %q (%v), minimized %d bytes (%+v): want at most 16", in, err, f.MinimizedBytes, f.Minimize)
	}
	if !bytes.Contains(in, []byte("null")) {
		t.Errorf("input.bin %q has no null", in)
	}
	if strings.Join(f.Target.ServerCommand, " ") != strings.Join(argv, " ") {
		t.Errorf("finding.json server_command %q, want %q", f.Target.ServerCommand, argv)
	}
	res, err := Replay(context.Background(), f.Dir, ReplayOptions{Child: child})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict() != "REPRODUCED (3/3)" {
		t.Errorf("replay: %s %q", res.Verdict(), res.Seen)
	}
	if accepts(addr) {
		t.Error("the server process still accepts connections after the replay")
	}
}

// TestServerCommandStartErrors: a server command that exits at once, or
// never listens, is an unreachable target whose error names the command,
// the address and what the process wrote.
func TestServerCommandStartErrors(t *testing.T) {
	addr := freeAddr(t)
	tg, err := transport.ParseTarget("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, mode string
		want       []string
	}{
		{"exits", "die", []string{"exited before " + addr, "exit status 0"}},
		{"never listens", "shuffle=bad", []string{"exited before " + addr, "invalid duration"}},
		{"bad bugs", "http=" + addr + "/nope", []string{"exited before " + addr, "exit status 1", "unknown planted bug"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Target: tg, ServerCommand: []string{os.Args[0], "-test.run=^$"}, Execs: 10, OutDir: t.TempDir(),
				Child: transport.ChildOptions{Env: []string{childEnv + "=" + tc.mode}}, ServerStart: 20 * time.Second}
			_, err := Run(context.Background(), cfg)
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Run = %v, want ErrUnreachable", err)
			}
			for _, w := range append(tc.want, os.Args[0]) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	cfg := Config{Target: tg, ServerCommand: []string{os.Args[0], "-test.run=^$"}, Execs: 10, OutDir: t.TempDir(),
		Child: transport.ChildOptions{Env: []string{childEnv + "=http=127.0.0.1:0/"}}, ServerStart: 300 * time.Millisecond}
	_, err = Run(context.Background(), cfg)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "did not accept connections on "+addr+" within 300ms") {
		t.Errorf("a server listening elsewhere: %v", err)
	}
	stdio, _ := transport.CommandTarget([]string{"cat"}, transport.Newline)
	if _, err := Run(context.Background(), Config{Target: stdio, ServerCommand: []string{"x"}, Execs: 1, OutDir: t.TempDir()}); err == nil {
		t.Error("a server command with a stdio target: no error")
	}
}

// TestServerGone: a network server rpcfuzz did not start dies of an
// input. The run reports one crash with the inputs last in flight as the
// suspects, blames no later input, and stops saying the server has to be
// restarted.
func TestServerGone(t *testing.T) {
	addr := freeAddr(t)
	argv, child := dyingServer(addr)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), child.Env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if _, err := out.Read(make([]byte, 64)); err != nil { // "listening on ..."
		t.Fatal(err)
	}
	tg, err := transport.ParseTarget("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: tg, Workers: 4, Execs: 50000, Duration: 2 * time.Minute, Seed: 1, OutDir: t.TempDir(), Timeout: time.Second}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Findings) != 1 {
		t.Fatalf("findings %+v", s.Findings)
	}
	f := s.Findings[0]
	if f.Key != "crash|-|server_gone" || len(f.Suspects) == 0 {
		t.Errorf("finding %s key %q suspects %q, want one crash|-|server_gone with suspects", f.ID, f.Key, f.Suspects)
	}
	all := []string{"input.bin"}
	for _, name := range f.Suspects {
		c, err := os.ReadFile(filepath.Join(f.Dir, name))
		if err != nil || !bytes.Contains(c, []byte(CaseSchema)) {
			t.Errorf("suspect %s: %v %.80q", name, err, c)
		}
		all = append(all, string(c))
	}
	main, _ := os.ReadFile(filepath.Join(f.Dir, "input.bin"))
	all[0] = string(main)
	if !strings.Contains(strings.Join(all, "\n"), "null") {
		t.Errorf("no input among the suspects holds a null: %q", all)
	}
	if !strings.Contains(s.Stopped, "restart it to go on") || !strings.Contains(s.Stopped, "--server-cmd") {
		t.Errorf("stopped %q does not say the server has to be restarted", s.Stopped)
	}
	var text bytes.Buffer
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "suspects (inputs in flight when the server died): input.bin, suspect-1.json") {
		t.Errorf("text output does not name the suspects:\n%s", text.String())
	}
}

// liveProcess is a transport.Process that runs until the test ends.
type liveProcess struct{ exited chan struct{} }

func (p liveProcess) PID() int                     { return 1 << 22 }
func (p liveProcess) Exited() <-chan struct{}      { return p.exited }
func (p liveProcess) ExitStatus() string           { return "" }
func (p liveProcess) RanFor() time.Duration        { return 0 }
func (p liveProcess) StderrTail() []string         { return nil }
func (p liveProcess) Proc() (procstat.Stat, error) { return procstat.Stat{}, nil }
func (p liveProcess) Close() error                 { return nil }

// TestSettleReplacedProcess: an exchange cut short with a process that
// another exchange already saw die and replaced is no crash of its own
// input (endReplaced, judged as nothing): over TCP against jrpc2 with
// eight workers, such an input was a crash "conn_reset" that its replays
// never showed. An exchange with the current process keeps its end.
func TestSettleReplacedProcess(t *testing.T) {
	s := &server{p: liveProcess{exited: make(chan struct{})}, gen: 2, network: "tcp", addr: freeAddr(t)}
	for _, tc := range []struct {
		name      string
		end, want endKind
		gen       uint64
	}{
		{"reset, replaced", endReset, endReplaced, 1},
		{"timeout, replaced", endTimeout, endReplaced, 1},
		{"closed, replaced", endClosed, endReplaced, 1},
		{"ok, replaced", endNone, endNone, 1},
		{"timeout, current process alive", endTimeout, endTimeout, 2},
	} {
		o := outcome{end: tc.end}
		s.settle(context.Background(), &o, tc.gen, 50*time.Millisecond)
		if o.end != tc.want {
			t.Errorf("%s: end %s, want %s", tc.name, o.end, tc.want)
		}
	}
	c := frames(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	infos, _ := inspect(c, nil)
	if v := judgeOutcome(c, infos, &outcome{end: endReplaced}, nil); v.rules != 0 {
		t.Errorf("an exchange cut by another input's crash is judged %v (%s)", v.rules, v.note)
	}
}

// TestCanaryTells: a canary cut short by another worker's crash (its
// process replaced) or by the run's end says nothing about the server; a
// silent canary on a live process does.
func TestCanaryTells(t *testing.T) {
	for _, tc := range []struct {
		end  endKind
		want bool
	}{
		{endNone, true},
		{endTimeout, true},
		{endClosed, true},
		{endExited, true},
		{endReplaced, false},
		{endInterrupted, false},
	} {
		res := canaryResult{result: result{o: outcome{end: tc.end}}}
		if got := res.tells(); got != tc.want {
			t.Errorf("a canary ended %s tells: %v, want %v", tc.end, got, tc.want)
		}
	}
}
