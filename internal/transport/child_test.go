//go:build linux

package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the child: with RPCLOAD_CHILD_MODE set it runs
// childMain instead of the tests. An init function rather than TestMain, so
// the package keeps its TestMain free for others.
const childModeEnv = "RPCLOAD_CHILD_MODE"

func init() {
	if mode := os.Getenv(childModeEnv); mode != "" {
		os.Exit(childMain(mode))
	}
}

func childMain(mode string) int {
	switch mode {
	case "echo":
		return echoLines()
	case "cl-echo":
		return echoCL()
	case "exit3":
		os.Stderr.WriteString("starting\nfatal: boom\n")
		return 3
	case "garbage":
		os.Stdout.WriteString("hello world\n{\"jsonrpc\":\n\x00\x01 binary\n")
		return echoLines()
	case "close-stdout":
		os.Stdout.Close()
		os.Stderr.WriteString("stdout closed\n")
		blockForever()
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		// A grandchild in the same process group, holding stderr.
		self, _ := os.Executable()
		gc := exec.Command(self)
		gc.Env = append(os.Environ(), childModeEnv+"=sleep")
		gc.Stderr = os.Stderr
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("ready %d\n", gc.Process.Pid)
		blockForever()
	case "sleep":
		blockForever()
	case "log-exit":
		os.Stdout.WriteString("to stdout\n")
		os.Stderr.WriteString("to stderr\n")
		return 4
	case "stdin-eof":
		if _, err := io.ReadAll(os.Stdin); err != nil {
			return 1
		}
		return 5
	case "flood":
		block := bytes.Repeat([]byte(strings.Repeat("x", 99)+"\n"), 10000) // 1 MB
		for range 100 {
			os.Stderr.Write(block)
		}
		os.Stderr.WriteString(strings.Repeat("L", 10000) + "\nflood done\n")
		return echoLines()
	case "stderr-file":
		os.Stderr.WriteString("hello stderr\nsecond line\n")
		return echoLines()
	case "env-dir":
		wd, _ := os.Getwd()
		fmt.Printf("%s|%s\n", wd, os.Getenv("RPCLOAD_TEST_EXTRA"))
		return echoLines()
	}
	fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
	return 2
}

func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// echoLines writes every line of stdin back to stdout; it exits 0 at EOF.
func echoLines() int {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			err = nil
		}
		w.Write(line)
		if r.Buffered() == 0 || err != nil {
			w.Flush()
		}
		if err != nil {
			return 0
		}
	}
}

// echoCL echoes Content-Length frames; it exits 0 at EOF.
func echoCL() int {
	cr := NewCLReader(os.Stdin, 16<<20)
	var out []byte
	for {
		body, err := cr.Next()
		if err != nil {
			return 0
		}
		out = append(AppendCLHeader(out[:0], len(body)), body...)
		os.Stdout.Write(out)
	}
}

// dialChild starts the test binary in the given mode through DialStream.
func dialChild(t *testing.T, mode string, f Framing, o ChildOptions) ChildStream {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tg, err := CommandTarget([]string{self, "child-" + mode}, f)
	if err != nil {
		t.Fatal(err)
	}
	// A race-enabled binary sleeps a second when it exits 0, unless told not to.
	o.Env = append(o.Env, childModeEnv+"="+mode, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	if o.Grace == 0 {
		o.Grace = 100 * time.Millisecond
	}
	st, err := DialStream(context.Background(), tg, StreamOptions{MaxFrame: 1 << 20, Child: o})
	if err != nil {
		t.Fatal(err)
	}
	cs, ok := st.(ChildStream)
	if !ok {
		t.Fatalf("DialStream returned %T, not a ChildStream", st)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// within runs f and fails the test if it takes longer than d.
func within[T any](t *testing.T, d time.Duration, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: not done within %v", what, d)
		panic("unreachable")
	}
}

type recvResult struct {
	msg string
	err error
}

func recv(t *testing.T, cs ChildStream) (string, error) {
	t.Helper()
	r := within(t, 30*time.Second, "Recv", func() recvResult {
		m, err := cs.Recv()
		return recvResult{string(m), err}
	})
	return r.msg, r.err
}

func closeChild(t *testing.T, cs ChildStream) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	err := within(t, 10*time.Second, "Close", cs.Close)
	return time.Since(start), err
}

func waitExited(t *testing.T, cs ChildStream) {
	t.Helper()
	within(t, 10*time.Second, "Exited", func() struct{} { return <-cs.Exited() })
}

func TestChildRoundTrip(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":0,"method":"big","params":["` + strings.Repeat("y", 200<<10) + `"]}`
	for _, tc := range []struct {
		mode string
		f    Framing
	}{{"echo", Newline}, {"cl-echo", ContentLength}} {
		t.Run(tc.f.String(), func(t *testing.T) {
			cs := dialChild(t, tc.mode, tc.f, ChildOptions{})
			var want []string
			for i := range 50 {
				want = append(want, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo"}`, i+1))
			}
			want[25] = big
			sent := make(chan error, 1)
			go func() {
				for _, m := range want {
					if err := cs.Send([]byte(m)); err != nil {
						sent <- err
						return
					}
				}
				sent <- cs.Flush(time.Now().Add(10 * time.Second))
			}()
			for i, w := range want {
				got, err := recv(t, cs)
				if err != nil || got != w {
					t.Fatalf("message %d: got %.60q, %v; want %.60q", i, got, err, w)
				}
			}
			if err := <-sent; err != nil {
				t.Fatalf("Send/Flush: %v", err)
			}
			if cs.PID() <= 0 || cs.ExitStatus() != "" || cs.RanFor() != 0 {
				t.Errorf("PID %d, ExitStatus %q, RanFor %s while running", cs.PID(), cs.ExitStatus(), cs.RanFor())
			}
			d, err := closeChild(t, cs)
			if err != nil || !strings.HasPrefix(cs.ExitStatus(), "exit status 0 after ") {
				t.Errorf("Close = %v after %v, ExitStatus %q; want nil, exit status 0", err, d, cs.ExitStatus())
			}
			if ran := cs.RanFor(); ran <= 0 || !strings.HasSuffix(cs.ExitStatus(), " after "+roundDuration(ran)) {
				t.Errorf("RanFor %s, ExitStatus %q: want the time in the status", ran, cs.ExitStatus())
			}
		})
	}
}

func TestChildGarbage(t *testing.T) {
	cs := dialChild(t, "garbage", Newline, ChildOptions{})
	for _, want := range []string{"hello world", `{"jsonrpc":`, "\x00\x01 binary"} {
		if got, err := recv(t, cs); err != nil || got != want {
			t.Fatalf("Recv = %q, %v; want %q", got, err, want)
		}
	}
	cs.Send([]byte(`{"id":1}`))
	if err := cs.Flush(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, err := recv(t, cs); err != nil || got != `{"id":1}` {
		t.Fatalf("Recv = %q, %v; want the echo", got, err)
	}
}

func TestChildExitsAtOnce(t *testing.T) {
	cs := dialChild(t, "exit3", Newline, ChildOptions{})
	_, err := recv(t, cs)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Recv error %v does not wrap io.EOF", err)
	}
	t.Logf("Recv: %v", err)
	for _, want := range []string{"child process exited: exit status 3 after ", "last stderr: starting | fatal: boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Recv error %q lacks %q", err, want)
		}
	}
	waitExited(t, cs)
	if s := cs.ExitStatus(); !strings.HasPrefix(s, "exit status 3 after ") {
		t.Errorf("ExitStatus = %q", s)
	}
	if tail := cs.StderrTail(); !slices.Equal(tail, []string{"starting", "fatal: boom"}) {
		t.Errorf("StderrTail = %q", tail)
	}
	if err := cs.Send([]byte(`{}`)); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Send after exit = %v; want an error with the exit status", err)
	}
	if err := cs.Flush(time.Now().Add(time.Second)); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Flush after exit = %v; want an error with the exit status", err)
	}
	if _, err := cs.Proc(); err == nil {
		t.Error("Proc after exit: no error")
	}
	if d, err := closeChild(t, cs); err != nil || d > time.Second {
		t.Errorf("Close = %v after %v", err, d)
	}
}

func TestChildStartErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.sh")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv []string
		is   error
	}{
		{"missing", []string{"rpcload-no-such-program-x7"}, exec.ErrNotFound},
		{"missing path", []string{filepath.Join(dir, "nope")}, fs.ErrNotExist},
		{"not executable", []string{plain, "arg"}, fs.ErrPermission},
		{"directory", []string{dir}, syscall.EISDIR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := CommandTarget(tc.argv, Newline)
			if err != nil {
				t.Fatal(err)
			}
			st, err := DialStream(context.Background(), tg, StreamOptions{MaxFrame: 1024})
			if err == nil {
				st.Close()
				t.Fatal("DialStream: no error")
			}
			if st != nil {
				t.Errorf("DialStream returned a non-nil stream %v with its error", st)
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), strconv.Quote(tc.argv[0])) {
				t.Errorf("error %q: want one naming %q and wrapping %v", err, tc.argv[0], tc.is)
			}
			t.Logf("DialStream: %v", err)
		})
	}
}

func TestChildClosesStdout(t *testing.T) {
	cs := dialChild(t, "close-stdout", Newline, ChildOptions{})
	_, err := recv(t, cs)
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "child closed its stdout") {
		t.Fatalf("Recv error = %v; want child closed its stdout (io.EOF)", err)
	}
	t.Logf("Recv: %v", err)
	if s := cs.ExitStatus(); s != "" {
		t.Fatalf("ExitStatus = %q while running", s)
	}
	d, err := closeChild(t, cs)
	if err != nil || !strings.HasPrefix(cs.ExitStatus(), "killed by signal SIGTERM after ") {
		t.Errorf("Close = %v, ExitStatus %q; want killed by SIGTERM", err, cs.ExitStatus())
	}
	if d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("Close took %v; want one grace (100ms) and a little", d)
	}
}

func TestChildIgnoresSIGTERM(t *testing.T) {
	cs := dialChild(t, "ignore-term", Newline, ChildOptions{})
	line, err := recv(t, cs)
	gpid, perr := strconv.Atoi(strings.TrimPrefix(line, "ready "))
	if err != nil || perr != nil {
		t.Fatalf("Recv = %q, %v", line, err)
	}
	pidfd := openPidfd(t, gpid)
	// The child never reads stdin: Flush gives up at its deadline.
	cs.Send(bytes.Repeat([]byte("z"), 4<<20))
	if err := within(t, 10*time.Second, "Flush", func() error {
		return cs.Flush(time.Now().Add(100 * time.Millisecond))
	}); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Flush to a child that does not read = %v; want a deadline error", err)
	}
	// Close unblocks a Recv waiting on a child that says nothing.
	recvDone := make(chan error, 1)
	go func() { _, err := cs.Recv(); recvDone <- err }()
	d, err := closeChild(t, cs)
	if err != nil || !strings.HasPrefix(cs.ExitStatus(), "killed by signal SIGKILL after ") {
		t.Errorf("Close = %v, ExitStatus %q; want killed by SIGKILL", err, cs.ExitStatus())
	}
	if d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("Close took %v; want two graces (200ms) and a little", d)
	}
	if pidfd >= 0 && !pidfdExited(pidfd, 5*time.Second) {
		t.Errorf("grandchild %d survived its process group's shutdown", gpid)
	}
	// Idempotent, and at once.
	if d, err2 := closeChild(t, cs); err2 != err || d > 100*time.Millisecond {
		t.Errorf("second Close = %v after %v", err2, d)
	}
	if err := within(t, 5*time.Second, "Recv during Close", func() error { return <-recvDone }); err == nil {
		t.Error("Recv during Close: no error")
	}
	if _, err := recv(t, cs); err == nil {
		t.Error("Recv after Close: no error")
	}
	if err := cs.Send([]byte("{}")); err == nil {
		t.Error("Send after Close: no error")
	}
}

// openPidfd returns a pidfd of pid (a process that is not our child), or -1
// if the kernel has no pidfd_open.
func openPidfd(t *testing.T, pid int) int {
	fd, _, errno := syscall.Syscall(434 /* pidfd_open */, uintptr(pid), 0, 0)
	if errno != 0 {
		t.Logf("pidfd_open(%d): %v; not checking the grandchild", pid, errno)
		return -1
	}
	t.Cleanup(func() { syscall.Close(int(fd)) })
	return int(fd)
}

// pidfdExited waits up to d for the pidfd to become readable (its process
// exited).
func pidfdExited(fd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		var set syscall.FdSet
		set.Bits[fd/64] |= 1 << (uint(fd) % 64)
		tv := syscall.NsecToTimeval(max(time.Until(deadline), 0).Nanoseconds())
		n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
		if err == syscall.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}

func TestChildGracefulClose(t *testing.T) {
	cs := dialChild(t, "echo", Newline, ChildOptions{Grace: 5 * time.Second})
	cs.Send([]byte(`{"id":1}`))
	if err := cs.Flush(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, err := recv(t, cs); err != nil || got != `{"id":1}` {
		t.Fatalf("Recv = %q, %v", got, err)
	}
	d, err := closeChild(t, cs)
	if err != nil || !strings.HasPrefix(cs.ExitStatus(), "exit status 0 after ") {
		t.Errorf("Close = %v, ExitStatus %q; want exit status 0", err, cs.ExitStatus())
	}
	if d > 2*time.Second {
		t.Errorf("Close took %v; a child that exits on stdin close needs no grace", d)
	}
	waitExited(t, cs)
	if _, err := recv(t, cs); err == nil {
		t.Error("Recv after Close: no error")
	}
}

func TestChildStderrFlood(t *testing.T) {
	cs := dialChild(t, "flood", Newline, ChildOptions{StderrTail: 3})
	cs.Send([]byte(`{"id":"after the flood"}`))
	if err := cs.Flush(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, err := recv(t, cs); err != nil || got != `{"id":"after the flood"}` {
		t.Fatalf("Recv = %q, %v", got, err)
	}
	if _, err := closeChild(t, cs); err != nil {
		t.Fatal(err)
	}
	want := []string{strings.Repeat("x", 99), strings.Repeat("L", stderrLineMax), "flood done"}
	if tail := cs.StderrTail(); !slices.Equal(tail, want) {
		t.Errorf("StderrTail = %.80q; want %.80q", tail, want)
	}
}

func TestChildStderrFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "child.log")
	if err := os.WriteFile(path, []byte("old line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := dialChild(t, "stderr-file", Newline, ChildOptions{StderrPath: path})
	cs.Send([]byte(`{"id":1}`))
	cs.Flush(time.Now().Add(5 * time.Second))
	if _, err := recv(t, cs); err != nil {
		t.Fatal(err)
	}
	if _, err := closeChild(t, cs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if want := "old line\nhello stderr\nsecond line\n"; err != nil || string(b) != want {
		t.Errorf("stderr file = %q, %v; want %q", b, err, want)
	}
	if tail := cs.StderrTail(); !slices.Equal(tail, []string{"hello stderr", "second line"}) {
		t.Errorf("StderrTail = %q", tail)
	}
	// An unwritable path fails the dial and starts nothing.
	tg, _ := CommandTarget([]string{"/bin/true"}, Newline)
	o := StreamOptions{MaxFrame: 64, Child: ChildOptions{StderrPath: filepath.Join(path, "not-a-dir", "x.log")}}
	if _, err := DialStream(context.Background(), tg, o); err == nil {
		t.Error("DialStream with an unwritable StderrPath: no error")
	}
}

func TestChildProc(t *testing.T) {
	cs := dialChild(t, "echo", Newline, ChildOptions{})
	cs.Send([]byte(`{"id":1}`))
	cs.Flush(time.Now().Add(5 * time.Second))
	if _, err := recv(t, cs); err != nil {
		t.Fatal(err)
	}
	if st, err := cs.Proc(); err != nil || st.RSSBytes <= 0 || st.RSSBytes%1024 != 0 || st.Threads < 1 || st.OpenFDs < 3 {
		t.Errorf("Proc = %+v, %v; want RSS a positive multiple of 1 KiB, a thread, stdin, stdout and stderr", st, err)
	}
	closeChild(t, cs)
	if st, err := cs.Proc(); err == nil {
		t.Errorf("Proc after Close = %+v, no error", st)
	}
}

func TestChildEnvDir(t *testing.T) {
	dir := t.TempDir()
	cs := dialChild(t, "env-dir", Newline, ChildOptions{Dir: dir, Env: []string{"RPCLOAD_TEST_EXTRA=yes"}})
	got, err := recv(t, cs)
	real, _ := filepath.EvalSymlinks(dir)
	if want := real + "|yes"; err != nil || got != want {
		t.Errorf("Recv = %q, %v; want %q", got, err, want)
	}
}

func TestChildNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, mode := range []string{"echo", "exit3", "close-stdout", "ignore-term", "garbage"} {
		cs := dialChild(t, mode, Newline, ChildOptions{})
		if mode == "exit3" || mode == "close-stdout" {
			recv(t, cs)
		}
		if _, err := closeChild(t, cs); err != nil {
			t.Errorf("%s: Close = %v", mode, err)
		}
	}
	tg, _ := CommandTarget([]string{"rpcload-no-such-program-x7"}, Newline)
	DialStream(context.Background(), tg, StreamOptions{MaxFrame: 64})
	// The helpers have signalled they are done; let them return.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

func TestTailRing(t *testing.T) {
	long := strings.Repeat("z", 600)
	for _, tc := range []struct {
		name   string
		n      int
		chunks []string
		want   []string
	}{
		{"empty", 3, nil, []string{}},
		{"lines", 3, []string{"a\nb\n"}, []string{"a", "b"}},
		{"split across writes", 3, []string{"he", "llo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"keeps the last n", 2, []string{"1\n2\n3\n4\n"}, []string{"3", "4"}},
		{"unfinished last line", 2, []string{"1\n2\n3"}, []string{"2", "3"}},
		{"crlf", 3, []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"blank lines kept", 3, []string{"a\n\nb\n"}, []string{"a", "", "b"}},
		{"long line cut", 3, []string{long[:300], long[300:] + "\nnext\n"}, []string{long[:stderrLineMax], "next"}},
		{"split writes, CRLF", 2, []string{"a", "b\r\nc\r", "\n"}, []string{"ab", "c"}},
		// What names a crash is kept when later lines push it out.
		{"panic pushed out by stacks", 3, []string{"log\npanic: boom\n\ngoroutine 1 [running]:\nmain.f()\n\tf.go:3\nexit status 2\n"},
			[]string{"panic: boom", "main.f()", "\tf.go:3", "exit status 2"}},
		{"first crash line kept, not a later one", 2, []string{"fatal error: x\npanic: y\na\nb\nc\n"}, []string{"fatal error: x", "b", "c"}},
		{"crash line still in the tail is not repeated", 3, []string{"a\npanic: y\nb\nc\n"}, []string{"panic: y", "b", "c"}},
		{"plain lines are not kept", 2, []string{"starting\nlistening\na\nb\n"}, []string{"a", "b"}},
		// gopls exits quoting the message it could not read.
		{"blank lines kept as one", 3, []string{"gopls: unmarshaling jsonrpc message: {\"method\":\"" + strings.Repeat("\n", 40) + "\"}\n"},
			[]string{"gopls: unmarshaling jsonrpc message: {\"method\":\"", "", "\"}"}},
		{"blank line first", 2, []string{"\n\n\na\n"}, []string{"", "a"}},
		{"whitespace lines are blank", 3, []string{"a\n \n\t\n\nb\n"}, []string{"a", " ", "b"}},
		{"Python traceback", 2, []string{"Traceback (most recent call last):\n  File \"s.py\"\nKeyError: 1\n"},
			[]string{"Traceback (most recent call last):", "  File \"s.py\"", "KeyError: 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTailRing(tc.n)
			for _, c := range tc.chunks {
				r.write([]byte(c))
			}
			if got := r.lines(); !slices.Equal(got, tc.want) {
				t.Errorf("lines = %q; want %q", got, tc.want)
			}
		})
	}
}

// TestStartProcess: a server process has an empty stdin, its stdout and
// stderr in the tail, its exit status, and Close ends it with SIGTERM at
// once (no stdin to close and wait on).
func TestStartProcess(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode, status string
		tail         []string
	}{
		{"log-exit", "exit status 4 after ", []string{"to stdout", "to stderr"}},
		{"stdin-eof", "exit status 5 after ", nil},
		{"sleep", "killed by signal SIGTERM after ", nil},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			o := ChildOptions{Grace: 10 * time.Second, Env: []string{childModeEnv + "=" + tc.mode, "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"}}
			p, err := StartProcess([]string{self, "server-" + tc.mode}, o)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.PID() <= 0 {
				t.Errorf("PID %d", p.PID())
			}
			if tc.mode != "sleep" {
				within(t, 10*time.Second, "exit", func() bool { <-p.Exited(); return true })
			}
			start := time.Now()
			err = within(t, 5*time.Second, "Close", p.Close)
			if d := time.Since(start); d >= o.Grace || err != nil {
				t.Errorf("Close took %v (%v); want SIGTERM at once", d, err)
			}
			if !strings.HasPrefix(p.ExitStatus(), tc.status) {
				t.Errorf("ExitStatus %q, want %q...", p.ExitStatus(), tc.status)
			}
			tail := p.StderrTail()
			for _, want := range tc.tail {
				if !slices.Contains(tail, want) {
					t.Errorf("tail %q lacks %q", tail, want)
				}
			}
		})
	}
	if _, err := StartProcess(nil, ChildOptions{}); err == nil {
		t.Error("StartProcess of no command: no error")
	}
	if _, err := StartProcess([]string{"/nonexistent/server"}, ChildOptions{}); err == nil || !strings.Contains(err.Error(), "/nonexistent/server") {
		t.Errorf("StartProcess of a missing program: %v", err)
	}
}

// TestKillChildren: KillChildren ends, with SIGKILL, a server process
// that has not been closed, and does not count one already reaped.
func TestKillChildren(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func(mode string) Process {
		o := ChildOptions{Grace: 10 * time.Second, Env: []string{childModeEnv + "=" + mode, "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"}}
		p, err := StartProcess([]string{self, "server-" + mode}, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	done := start("log-exit")
	within(t, 10*time.Second, "exit", func() bool { <-done.Exited(); return true })
	p := start("sleep")
	if n := KillChildren(); n < 1 {
		t.Fatalf("KillChildren signalled %d processes, want the sleeping one", n)
	}
	within(t, 10*time.Second, "exit after KillChildren", func() bool { <-p.Exited(); return true })
	if !strings.HasPrefix(p.ExitStatus(), "killed by signal SIGKILL") {
		t.Errorf("ExitStatus %q, want killed by SIGKILL", p.ExitStatus())
	}
	live.mu.Lock()
	_, held := live.procs[done.(*childStream)]
	live.mu.Unlock()
	if held {
		t.Error("a reaped process is still in the live set")
	}
}
