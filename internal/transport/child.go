package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpcload/rpcload/internal/procstat"
)

// ChildOptions configure child processes (the stdio scheme).
type ChildOptions struct {
	StderrPath string        // the child's stderr is appended to this file (created 0644); "" discards it, keeping the tail
	StderrTail int           // how many last stderr lines to keep in memory (default 20), each cut to 512 bytes
	Grace      time.Duration // shutdown: after closing stdin wait this long for exit, then SIGTERM, wait again, then SIGKILL (default 2s)
	Env        []string      // extra environment (KEY=value) on top of the parent's
	Dir        string        // working directory ("" = the parent's)
}

// Process is a child process: a stdio child (ChildStream), or a server
// reached over the network (StartProcess).
type Process interface {
	// PID is the child's process id.
	PID() int
	// Exited is closed when the process has exited (and was reaped).
	Exited() <-chan struct{}
	// ExitStatus is "" while the process runs, then how it ended and when,
	// e.g. "exit status 1 after 12ms" or "killed by signal SIGSEGV after 3.2s".
	ExitStatus() string
	// RanFor is how long the process ran, from its start to its exit; 0
	// while it runs.
	RanFor() time.Duration
	// StderrTail returns a copy of the last lines the child wrote to
	// stderr (a run of blank lines counts as one), preceded by the first
	// crash line (a panic, a fatal error) that later lines pushed out;
	// once the process has exited, all it wrote.
	StderrTail() []string
	// Proc reads the child's resident memory, threads and open files
	// (Linux only; an error once the process has exited).
	Proc() (procstat.Stat, error)
	// Close ends the process (see childStream.Close and StartProcess) and
	// reaps it; it is idempotent.
	Close() error
}

// ChildStream is a Stream over the stdin and stdout of a child process.
// DialStream returns one for a Stdio target.
type ChildStream interface {
	Stream
	Process
}

const (
	defaultGrace      = 2 * time.Second
	defaultStderrTail = 20
	stderrLineMax     = 512
	// exitSettle is how long an error on the pipes waits for the child's
	// exit to be reaped, to tell a dead child from one that closed stdout.
	exitSettle = 250 * time.Millisecond
	// afterExit is how long stdout and stderr are still read once the child
	// has exited: its own children may hold them open.
	afterExit = 200 * time.Millisecond
	// killWait bounds the wait after SIGKILL (a process stuck in the kernel).
	killWait = 2 * time.Second
)

func init() {
	streamDialers[Stdio] = func(ctx context.Context, t Target, o StreamOptions) (Stream, error) {
		cs, err := startChild(ctx, t.Command, t.Framing, o.MaxFrame, o.Child)
		if err != nil {
			return nil, err
		}
		return cs, nil
	}
}

var _ ChildStream = (*childStream)(nil)

// childStream frames messages over a child's stdin and stdout (one of
// StartProcess has neither, and no Stream: it is only a Process). Send and
// Flush belong to one goroutine, Recv to another, Close to any.
type childStream struct {
	Stream        // a byteStream over childPipes
	cmd           *exec.Cmd
	name          string // argv[0], for messages
	stdin, stdout *os.File
	stderr        *os.File
	start         time.Time
	grace         time.Duration
	tail          *tailRing

	exited     chan struct{} // closed by wait once the process is reaped
	waitDone   chan struct{} // closed when wait returns
	stderrDone chan struct{} // closed when copyStderr returns
	status     string        // written by wait before exited is closed
	ranFor     time.Duration // likewise
	dead       atomic.Bool   // set with exited, for the hot path
	closing    atomic.Bool
	fileErr    error // written by copyStderr before stderrDone is closed

	closeOnce sync.Once
	closeErr  error
}

// childPipes is the child's stdin (written) and stdout (read) as one
// ReadWriteCloser. Closing is childStream.Close's job.
type childPipes struct{ in, out *os.File }

func (p childPipes) Read(b []byte) (int, error)         { return p.out.Read(b) }
func (p childPipes) Write(b []byte) (int, error)        { return p.in.Write(b) }
func (p childPipes) Close() error                       { return nil }
func (p childPipes) SetWriteDeadline(t time.Time) error { return p.in.SetWriteDeadline(t) }

// startChild starts argv without a shell and frames messages over its stdio.
func startChild(ctx context.Context, argv []string, f Framing, maxFrame int, o ChildOptions) (*childStream, error) {
	if f == Messages {
		return nil, errors.New("transport: a child process needs newline or content-length framing")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := startProcess(argv, o, true)
	if err != nil {
		return nil, err
	}
	s.Stream = NewByteStream(childPipes{in: s.stdin, out: s.stdout}, f, maxFrame)
	return s, nil
}

// StartProcess starts argv without a shell, in a process group of its
// own, as a server that is reached over the network: its stdin is empty
// (/dev/null), and what it writes to stdout and stderr alike goes to the
// tail (StderrTail, o.StderrTail lines) and to o.StderrPath. Close sends
// SIGTERM to its group, waits o.Grace, then sends SIGKILL: a server does
// not end when its stdin does.
func StartProcess(argv []string, o ChildOptions) (Process, error) {
	s, err := startProcess(argv, o, false)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// startProcess starts argv; stdio gives it pipes for stdin and stdout (a
// stdio child), else stdout goes where stderr goes.
func startProcess(argv []string, o ChildOptions, stdio bool) (*childStream, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("transport: no command to run")
	}
	path, err := lookChild(argv[0], o.Dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	setProcGroup(cmd)

	var files []*os.File // everything to close if the start fails
	fail := func(err error) (*childStream, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	var errFile *os.File
	if o.StderrPath != "" {
		if errFile, err = os.OpenFile(o.StderrPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
			return fail(fmt.Errorf("transport: child stderr file: %w", err))
		}
		files = append(files, errFile)
	}
	var p [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < len(p); i += 2 {
		if !stdio && i < 4 {
			continue
		}
		if p[i], p[i+1], err = os.Pipe(); err != nil {
			return fail(fmt.Errorf("transport: pipes for %q: %w", argv[0], err))
		}
		files = append(files, p[i], p[i+1])
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p[0], p[3], p[5]
	if !stdio {
		cmd.Stdin, cmd.Stdout = nil, p[5] // nil: /dev/null
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("transport: cannot start %q: %w", argv[0], err))
	}
	// The child has its ends now; holding them would hide its exit.
	for _, f := range []*os.File{p[0], p[3], p[5]} {
		if f != nil {
			f.Close()
		}
	}

	tailN := o.StderrTail
	if tailN <= 0 {
		tailN = defaultStderrTail
	}
	grace := o.Grace
	if grace <= 0 {
		grace = defaultGrace
	}
	s := &childStream{
		cmd: cmd, name: argv[0], stdin: p[1], stdout: p[2], stderr: p[4],
		start: start, grace: grace, tail: newTailRing(tailN),
		exited: make(chan struct{}), waitDone: make(chan struct{}), stderrDone: make(chan struct{}),
	}
	live.add(s)
	go s.copyStderr(errFile)
	go s.wait()
	return s, nil
}

// live holds the processes started and not yet reaped, for KillChildren.
var live = liveSet{procs: map[*childStream]struct{}{}}

type liveSet struct {
	mu    sync.Mutex
	procs map[*childStream]struct{}
}

func (l *liveSet) add(s *childStream) {
	l.mu.Lock()
	l.procs[s] = struct{}{}
	l.mu.Unlock()
}

func (l *liveSet) remove(s *childStream) {
	l.mu.Lock()
	delete(l.procs, s)
	l.mu.Unlock()
}

// KillChildren sends SIGKILL to the process group of every process
// started here (a stdio child, a server command) that has not been
// reaped yet, and returns how many it signalled. A command calls it just
// before exiting at once (a second interrupt): the children live in
// process groups of their own, so the terminal's Ctrl-C never reaches
// them, and without it a server rpcfuzz started would outlive rpcfuzz.
func KillChildren() int {
	live.mu.Lock()
	defer live.mu.Unlock()
	n := 0
	for s := range live.procs {
		if s.dead.Load() {
			continue // reaped or being reaped: its pid may be another's soon
		}
		if signalChild(s.cmd.Process, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// lookChild resolves the program like exec.Command does, but relative to
// dir for a relative path, and names the program in its errors.
func lookChild(prog, dir string) (string, error) {
	p := prog
	if dir != "" && strings.ContainsRune(p, os.PathSeparator) && !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	path, err := exec.LookPath(p)
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return "", fmt.Errorf("transport: cannot run %q: %w", prog, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}

// wait reaps the child and records how it ended.
func (s *childStream) wait() {
	defer close(s.waitDone)
	err := s.cmd.Wait()
	live.remove(s)
	d := time.Since(s.start)
	how := ""
	if ps := s.cmd.ProcessState; ps != nil {
		how = exitStatus(ps)
	} else {
		how = err.Error()
	}
	s.status = how + " after " + roundDuration(d)
	s.ranFor = d
	s.dead.Store(true)
	close(s.exited)
	// Read what the child left in the pipes, but not forever: its own
	// children may keep them open.
	limit := time.Now().Add(afterExit)
	if s.stdout != nil {
		s.stdout.SetReadDeadline(limit)
	}
	s.stderr.SetReadDeadline(limit)
}

func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// copyStderr reads stderr continuously into the tail ring and the file.
func (s *childStream) copyStderr(file *os.File) {
	defer close(s.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.stderr.Read(buf)
		if n > 0 {
			if file != nil {
				if _, werr := file.Write(buf[:n]); werr != nil {
					s.fileErr = fmt.Errorf("transport: writing child stderr: %w", werr)
					file.Close()
					file = nil
				}
			}
			s.tail.write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	s.stderr.Close()
	if file != nil {
		if err := file.Close(); err != nil {
			s.fileErr = fmt.Errorf("transport: writing child stderr: %w", err)
		}
	}
}

func (s *childStream) PID() int                { return s.cmd.Process.Pid }
func (s *childStream) Exited() <-chan struct{} { return s.exited }

// StderrTail, once the process has exited, waits for the rest of its
// output (bounded: wait sets a read deadline after the exit), so that the
// panic of a crash is in it.
func (s *childStream) StderrTail() []string {
	if s.dead.Load() {
		<-s.stderrDone
	}
	return s.tail.lines()
}

func (s *childStream) RanFor() time.Duration {
	if !s.dead.Load() {
		return 0
	}
	return s.ranFor
}

func (s *childStream) ExitStatus() string {
	if !s.dead.Load() {
		return ""
	}
	return s.status
}

func (s *childStream) Proc() (procstat.Stat, error) {
	if s.dead.Load() {
		return procstat.Stat{}, s.exitErr(errors.New("no figures of its process"))
	}
	st, err := procstat.Read(s.PID())
	if s.dead.Load() {
		// The pid may belong to another process by now.
		return procstat.Stat{}, s.exitErr(errors.New("no figures of its process"))
	}
	return st, err
}

func (s *childStream) Send(msg []byte) error {
	if s.dead.Load() {
		return s.exitErr(io.ErrClosedPipe)
	}
	if s.closing.Load() {
		return fmt.Errorf("transport: child stream closed: %w", os.ErrClosed)
	}
	return s.Stream.Send(msg)
}

func (s *childStream) Flush(deadline time.Time) error {
	if s.dead.Load() {
		return s.exitErr(io.ErrClosedPipe)
	}
	err := s.Stream.Flush(deadline)
	if err == nil {
		return nil
	}
	if s.closing.Load() && !s.dead.Load() {
		return fmt.Errorf("transport: child stream closed: %w", err)
	}
	if s.settled() {
		return s.exitErr(err)
	}
	return fmt.Errorf("transport: writing to child stdin: %w", err)
}

// Reads counts the reads from the child's stdout that returned data.
func (s *childStream) Reads() uint64 { return s.Stream.(ReadCounter).Reads() }

// Buffered reports whether a whole message from the child is buffered.
func (s *childStream) Buffered() bool { return s.Stream.(Buffering).Buffered() }

func (s *childStream) Recv() ([]byte, error) {
	msg, err := s.Stream.Recv()
	if err == nil || err == ErrFrameTooLarge {
		return msg, err
	}
	eof := errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = io.EOF // the child is gone; its children held stdout
	}
	switch {
	case eof || errors.Is(err, io.ErrUnexpectedEOF):
		if s.settled() {
			return nil, s.exitErr(err)
		}
		if s.closing.Load() {
			return nil, fmt.Errorf("transport: child stream closed: %w", err)
		}
		return nil, fmt.Errorf("transport: child closed its stdout: %w", err)
	case errors.Is(err, os.ErrClosed) && s.closing.Load():
		if s.dead.Load() {
			return nil, s.exitErr(err)
		}
		return nil, fmt.Errorf("transport: child stream closed: %w", err)
	}
	return nil, err
}

// settled waits a little for the child to be reaped and reports whether it
// has exited. A stream being closed does not wait: Close does.
func (s *childStream) settled() bool {
	if s.dead.Load() || s.closing.Load() {
		return s.dead.Load()
	}
	t := time.NewTimer(exitSettle)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitErr wraps err with the exit status and the last lines of stderr; the
// child must have exited.
func (s *childStream) exitErr(err error) error {
	<-s.stderrDone // bounded: wait sets a read deadline after the exit
	note := ""
	lines := s.tail.lines()
	var last []string
	for i := len(lines) - 1; i >= 0 && len(last) < 5; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			last = append(last, strings.ToValidUTF8(l, "?"))
		}
	}
	if len(last) > 0 {
		for i, j := 0, len(last)-1; i < j; i, j = i+1, j-1 {
			last[i], last[j] = last[j], last[i]
		}
		note = "; last stderr: " + strings.Join(last, " | ")
	}
	return fmt.Errorf("transport: child process exited: %s%s: %w", s.status, note, err)
}

// Close shuts the child down as MCP asks: close its stdin, wait up to Grace
// for it to exit, SIGTERM its process group, wait up to Grace again, then
// SIGKILL (a process of StartProcess, without a stdin, starts at SIGTERM). It reaps the child and stops the helper goroutines. Close is
// idempotent; it returns an error only if the child outlived SIGKILL or its
// stderr could not be written to StderrPath.
func (s *childStream) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *childStream) shutdown() error {
	s.closing.Store(true)
	exited := false
	if s.stdin != nil {
		s.stdin.Close()
		exited = s.waitExit(s.grace)
	}
	var err error
	if !exited {
		signalChild(s.cmd.Process, syscall.SIGTERM)
		if !s.waitExit(s.grace) {
			signalChild(s.cmd.Process, syscall.SIGKILL)
			if !s.waitExit(killWait) {
				err = fmt.Errorf("transport: child process %d (%s) did not exit after SIGKILL", s.PID(), s.name)
			}
		}
	}
	if s.stdout != nil {
		s.stdout.Close() // unblocks Recv
	}
	if err != nil {
		return err
	}
	<-s.waitDone
	<-s.stderrDone
	return s.fileErr
}

// waitExit waits up to d for the child's exit.
func (s *childStream) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}

// tailRing keeps the last lines of a byte stream, each cut to
// stderrLineMax bytes; its memory is bounded whatever the stream holds.
//
// What names a crash can come before the tail: a Go panic line ahead of
// more goroutine stacks than the ring holds, or a server's one-line exit
// message that quotes the input it choked on, line breaks and all (gopls
// prints the message it could not read, and dozens of "\n" in a string
// push its own line out). So the ring also keeps the first crash line
// (crashLine) pushed out of it, and keeps a run of blank lines as one:
// blank lines say nothing, and a flood of them must not push out a line
// that does.
type tailRing struct {
	mu    sync.Mutex // guards everything below
	ring  [][]byte   // complete lines; ring[next] is the oldest once full
	next  int
	n     int
	cur   []byte // the line being read, cut to stderrLineMax
	pin   []byte // the first crash line pushed out of ring, or nil
	blank bool   // the newest line in ring is blank
}

func newTailRing(n int) *tailRing {
	return &tailRing{ring: make([][]byte, n), cur: make([]byte, 0, stderrLineMax)}
}

func (t *tailRing) write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := stderrLineMax - len(t.cur); room > 0 {
			t.cur = append(t.cur, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			return
		}
		t.push(bytes.TrimSuffix(t.cur, []byte{'\r'}))
		t.cur = t.cur[:0]
		p = p[i+1:]
	}
}

// push adds a complete line to the ring.
func (t *tailRing) push(line []byte) {
	blank := len(bytes.TrimSpace(line)) == 0
	if blank && t.blank && t.n > 0 {
		return
	}
	t.blank = blank
	if old := t.ring[t.next]; t.n == len(t.ring) && t.pin == nil && crashLine(old) {
		t.pin = bytes.Clone(old)
	}
	t.ring[t.next] = append(t.ring[t.next][:0], line...)
	t.next = (t.next + 1) % len(t.ring)
	t.n = min(t.n+1, len(t.ring))
}

// crashLine reports whether a stderr line starts the report of a crash: a
// Go panic or fatal error, a fatal or error line, a segfault, a Python
// traceback, an uncaught exception. Such a line starts a report, so only
// the first one pushed out of the ring is kept.
func crashLine(line []byte) bool {
	low := strings.ToLower(string(bytes.TrimSpace(line)))
	for _, prefix := range [...]string{"panic:", "fatal error:", "fatal:", "error:"} {
		if strings.HasPrefix(low, prefix) {
			return true
		}
	}
	return strings.Contains(low, "segmentation fault") || strings.HasPrefix(low, "traceback") ||
		strings.Contains(low, "uncaught exception") || strings.Contains(low, "unhandled exception")
}

// lines returns the kept lines, oldest first, with an unfinished last line,
// preceded by the crash line pushed out of them, if any.
func (t *tailRing) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, t.n+2)
	if t.pin != nil {
		out = append(out, string(t.pin))
	}
	kept := len(out)
	for i := range t.n {
		out = append(out, string(t.ring[(t.next-t.n+i+len(t.ring))%len(t.ring)]))
	}
	if len(t.cur) > 0 {
		out = append(out, string(bytes.TrimSuffix(t.cur, []byte{'\r'})))
		if len(out)-kept > len(t.ring) {
			out = append(out[:kept], out[kept+1:]...)
		}
	}
	return out
}
