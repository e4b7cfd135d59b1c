package fuzz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// DefaultServerStart bounds the wait for a started server's port.
const DefaultServerStart = 10 * time.Second

// serverPoll is how often a starting server's port is tried.
const serverPoll = 20 * time.Millisecond

// server is the network server rpcfuzz starts (Config.ServerCommand): one
// process at a time, started again after it crashed. The process itself
// is transport's child-process code (StartProcess): its group, its output
// tail, its exit status and its shutdown live there.
//
// Exchanges share the server; a crash's confirmation and minimization hold
// it alone (excl), so that what kills a fresh process is the input being
// checked and no other worker's.
type server struct {
	argv    []string
	opts    transport.ChildOptions
	network string // what is dialled to see the server accept: tcp or unix
	addr    string
	wait    time.Duration
	excl    sync.RWMutex

	mu     sync.Mutex // guards everything below
	p      transport.Process
	gen    uint64 // the process's generation: 1 for the first, +1 at each start
	starts int64
	// suspects are the inputs last sent to each generation that died (one
	// per worker), taken before the next one started: see suspectsOf.
	suspects map[uint64][]mutate.Case
	inflight func(gen uint64) []mutate.Case
}

// newServer returns the server of cfg, or nil when cfg starts none.
func newServer(cfg *Config) (*server, error) {
	if len(cfg.ServerCommand) == 0 {
		return nil, nil
	}
	network, addr, err := listenAddr(cfg.Target)
	if err != nil {
		return nil, err
	}
	return &server{argv: cfg.ServerCommand, opts: cfg.Child, network: network, addr: addr, wait: cfg.ServerStart,
		suspects: map[uint64][]mutate.Case{}}, nil
}

// listenAddr is where a network target's server listens.
func listenAddr(t transport.Target) (network, addr string, err error) {
	switch t.Scheme {
	case transport.TCP, transport.TCPLSP:
		return "tcp", t.Addr, nil
	case transport.Unix, transport.UnixLSP:
		return "unix", t.Addr, nil
	case transport.HTTP, transport.HTTPS, transport.WS, transport.WSS:
		u, err := url.Parse(t.URL)
		if err != nil {
			return "", "", err
		}
		port := u.Port()
		if port == "" {
			port = "80"
			if t.Scheme == transport.HTTPS || t.Scheme == transport.WSS {
				port = "443"
			}
		}
		return "tcp", net.JoinHostPort(u.Hostname(), port), nil
	}
	return "", "", fmt.Errorf("a server command needs a network target (http, ws, tcp, unix), not %s", t.Scheme)
}

// name is the command line, for messages.
func (s *server) name() string { return strings.Join(s.argv, " ") }

// ensure starts the server unless its current process runs, and returns
// the process's generation. A process that died is replaced; its
// suspects are taken first.
func (s *server) ensure(ctx context.Context) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		select {
		case <-s.p.Exited():
		default:
			return s.gen, nil
		}
	}
	err := s.startLocked(ctx)
	return s.gen, err
}

// restart replaces the process of generation gen, alive but not
// accepting connections, with a new one.
func (s *server) restart(ctx context.Context, gen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen {
		return nil // someone else restarted it
	}
	return s.startLocked(ctx)
}

// startLocked ends the current process (if any) and starts a new one,
// waiting until its port accepts a connection.
func (s *server) startLocked(ctx context.Context) error {
	if s.p != nil {
		s.suspectsLocked(s.gen)
		_ = s.p.Close()
		s.p = nil
	}
	if s.accepts(ctx) {
		return fmt.Errorf("%w: something already accepts connections on %s before the server command %q started: stop it, or fuzz it without a server command",
			ErrUnreachable, s.addr, s.name())
	}
	p, err := transport.StartProcess(s.argv, s.opts)
	if err != nil {
		return fmt.Errorf("%w: the server command: %v", ErrUnreachable, err)
	}
	deadline := time.Now().Add(s.wait)
	t := time.NewTimer(serverPoll)
	defer t.Stop()
	for !s.accepts(ctx) {
		t.Reset(serverPoll)
		select {
		case <-p.Exited():
			_ = p.Close()
			return fmt.Errorf("%w: the server command %q exited before %s accepted a connection: %s%s",
				ErrUnreachable, s.name(), s.addr, p.ExitStatus(), tailNote(p.StderrTail()))
		case <-ctx.Done():
			_ = p.Close()
			return ctx.Err()
		case <-t.C:
		}
		if time.Now().After(deadline) {
			_ = p.Close()
			return fmt.Errorf("%w: the server command %q did not accept connections on %s within %s%s",
				ErrUnreachable, s.name(), s.addr, s.wait, tailNote(p.StderrTail()))
		}
	}
	s.p = p
	s.gen++
	s.starts++
	return nil
}

// accepts reports whether the server's address accepts a connection now.
func (s *server) accepts(ctx context.Context) bool {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, s.network, s.addr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// tailNote is the last lines of a process's output for an error message.
func tailNote(lines []string) string {
	var last []string
	for i := len(lines) - 1; i >= 0 && len(last) < 5; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			last = append([]string{strings.ToValidUTF8(l, "?")}, last...)
		}
	}
	if len(last) == 0 {
		return " (it wrote nothing)"
	}
	return "; its last output: " + strings.Join(last, " | ")
}

// current returns the running process and its generation (nil before the
// first start).
func (s *server) current() (transport.Process, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p, s.gen
}

// settle tells, after an exchange with the process of generation gen
// ended without its replies, whether the process died: a reset, a close
// or a refused connection is then its exit (with its status and output
// tail, as a child's is), and a timeout too once it has exited. A server
// that still accepts connections lives: the end stays what it was.
func (s *server) settle(ctx context.Context, o *outcome, gen uint64, timeout time.Duration) {
	switch o.end {
	case endReset, endClosed, endUnreachable, endTimeout:
	case endNone:
		if !o.wire {
			return
		}
	default:
		return
	}
	p, cur := s.current()
	if p == nil {
		return
	}
	if cur != gen {
		// (jrpc2 over TCP, eight workers: an input's connection reset
		// as another input killed the process, restarted before this
		// exchange looked, was a crash "conn_reset" of its own, which
		// its replays never showed.)
		if o.end != endNone {
			o.end = endReplaced
		}
		return
	}
	// Broken framing is followed by a half-close, and a server that
	// dies of what it read (jrpc2 does, as it stops) may close the
	// connection cleanly first: the end of the replies is then a
	// moment before its exit, which is waited for, or the next input
	// on this process is blamed for it.
	if o.end == endNone && !exitedWithin(p, exitSettle) {
		return
	}
	// A dying process closes its connections before it is reaped, and its
	// listening socket may still complete a handshake meanwhile: its exit
	// is waited for a moment first, then, if its address refuses
	// connections (it is dying or hung), a while longer.
	if o.end == endTimeout && !exitedWithin(p, 0) || o.end != endTimeout && !exitedWithin(p, exitSettle) && s.accepts(ctx) {
		return
	}
	if !exitedWithin(p, min(time.Second, timeout)) {
		o.note = "the server accepts no connection and its process " + strconv.Itoa(p.PID()) + " still runs: " + o.note
		o.end = endUnreachable
		return
	}
	o.end = endExited
	o.note = p.ExitStatus() + " (the server command's process)"
	o.exitCode = exitCodeOf(p.ExitStatus())
	o.stderr = p.StderrTail()
}

// exitSettle is how long an exchange that ended abruptly waits for the
// server process's exit before its address is tried.
const exitSettle = 50 * time.Millisecond

// exitedWithin reports whether p exits within d (0: has exited).
func exitedWithin(p transport.Process, d time.Duration) bool {
	select {
	case <-p.Exited():
		return true
	default:
		if d <= 0 {
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.Exited():
		return true
	case <-t.C:
		return false
	}
}

// suspectsOf returns the inputs last sent to generation gen, which died,
// one per worker.
func (s *server) suspectsOf(gen uint64) []mutate.Case {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suspectsLocked(gen)
}

func (s *server) suspectsLocked(gen uint64) []mutate.Case {
	if got, ok := s.suspects[gen]; ok {
		return got
	}
	var got []mutate.Case
	if s.inflight != nil {
		got = s.inflight(gen)
	}
	if len(s.suspects) >= 8 {
		clear(s.suspects) // old generations' crashes are long reported
	}
	s.suspects[gen] = got
	return got
}

// close ends the process started last; the run's end and its error paths
// call it.
func (s *server) close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return nil
	}
	err := s.p.Close()
	s.p = nil
	return err
}

// restarts is how many times the server was started again.
func (s *server) restarts() int64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(0, s.starts-1)
}

// refused reports whether a dial failed because nothing listens.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// dial opens one connection, handshake included.
func (d *dialer) dial(ctx context.Context) (conn, error) { return d.dialWith(ctx, true) }

// dialWith opens one connection (with the profile's handshake when
// handshake is set); with a server command, it (re)starts the server
// first when its process is gone or refuses connections.
func (d *dialer) dialWith(ctx context.Context, handshake bool) (conn, error) {
	if d.srv == nil {
		return d.dialTarget(ctx, handshake)
	}
	gen, err := d.srv.ensure(ctx)
	if err != nil {
		return nil, err
	}
	c, err := d.dialTarget(ctx, handshake)
	if err != nil && refused(err) {
		if err := d.srv.restart(ctx, gen); err != nil {
			return nil, err
		}
		c, err = d.dialTarget(ctx, handshake)
	}
	return c, err
}

// inflightSlot is the last input a worker sent, and the generation of the
// server process it went to (0 without a server command).
type inflightSlot struct {
	mu  sync.Mutex
	in  mutate.Case
	gen uint64
	set bool
}

// sending notes that w is about to send c (whose frames infos describes)
// and returns the generation of the server process it goes to. The
// canary is not noted: it is no suspect.
func (r *run) sending(w *worker, c mutate.Case, infos []frameInfo) uint64 {
	var gen uint64
	if r.d.srv != nil {
		_, gen = r.d.srv.current()
	}
	canary := len(infos) == 1 && bytes.HasPrefix(infos[0].id, []byte(canaryPrefix))
	if w.id < len(r.slots) && !canary {
		sl := &r.slots[w.id]
		sl.mu.Lock()
		sl.in, sl.gen, sl.set = c, gen, true
		sl.mu.Unlock()
	}
	return gen
}

// inflight returns the last input each worker sent to generation gen.
func (r *run) inflight(gen uint64) []mutate.Case {
	var out []mutate.Case
	for i := range r.slots {
		sl := &r.slots[i]
		sl.mu.Lock()
		if sl.set && sl.gen == gen {
			out = append(out, sl.in)
		}
		sl.mu.Unlock()
	}
	return out
}

// shareServer lets w's exchange share the server with the other workers'
// (nothing to do without a server command, or when w holds it alone); the
// returned func ends the share.
func (r *run) shareServer(w *worker) func() {
	if r.d.srv == nil || w.alone {
		return func() {}
	}
	r.d.srv.excl.RLock()
	return r.d.srv.excl.RUnlock
}

// holdServer gives w the server alone while it confirms and minimizes a
// crash: the others' inputs wait, so what kills a fresh process is the
// input checked. It returns the release (nil when there is nothing to
// hold).
func (r *run) holdServer(w *worker, cand *candidate) func() {
	if cand.v.rule != check.Crash {
		return nil
	}
	return r.holdServerAlone(w)
}

// holdServerAlone gives w the server alone (see holdServer) and returns
// the release, or nil when there is nothing to hold: no server command, or
// w holds it already.
func (r *run) holdServerAlone(w *worker) func() {
	if r.d.srv == nil || w.alone {
		return nil
	}
	r.d.srv.excl.Lock()
	w.alone = true
	return func() {
		w.alone = false
		r.d.srv.excl.Unlock()
	}
}

// serverSuspects fills in a server crash's suspects: the other inputs last
// sent to the process that died, which confirmation tries when the
// candidate's own input does not kill a fresh process.
func (r *run) serverSuspects(cand *candidate, res *result) {
	if r.d.srv == nil || res.o.end != endExited {
		return
	}
	for _, s := range r.d.srv.suspectsOf(res.gen) {
		if !sameCase(s, cand.in) {
			cand.suspects = append(cand.suspects, s)
		}
	}
}

// confirmSuspect tries a crash candidate's suspects, each alone against a
// fresh process: the first that kills it becomes the candidate's input.
func (r *run) confirmSuspect(ctx context.Context, cand *candidate) bool {
	for _, s := range cand.suspects {
		if ctx.Err() != nil {
			return false
		}
		if cand.check(ctx, s) {
			cand.in = s
			cand.applied = nil // the ops that made it are not known
			return true
		}
	}
	return false
}

func sameCase(a, b mutate.Case) bool {
	if len(a.Frames) != len(b.Frames) || string(a.Wire) != string(b.Wire) || (a.Wire == nil) != (b.Wire == nil) {
		return false
	}
	for i := range a.Frames {
		if string(a.Frames[i]) != string(b.Frames[i]) {
			return false
		}
	}
	return true
}

// gone handles a crash of a network server rpcfuzz did not start: once it
// accepts no connection any more (or resets every one), nothing can be
// re-checked and every later input would be blamed for its death. The
// inputs last in flight, one per worker, are reported as the suspects in
// one crash finding, and the run stops, saying that the server has to be
// restarted. It reports whether res was taken care of (the server is gone,
// now or before).
func (r *run) gone(w *worker, in mutate.Case, res *result) bool {
	if r.serverGone.Load() {
		return true
	}
	if r.d.srv != nil || r.cfg.Target.Scheme == transport.Stdio || !res.v.rules.Has(check.Crash) {
		return false
	}
	switch res.v.shape {
	case "unreachable", "conn_reset", "conn_closed":
	default:
		return false // a 5xx, say: the server answered
	}
	suspects := append([]mutate.Case{in}, r.inflight(0)...) // taken before the probe's own exchanges
	why, down := r.probeGone(w)
	if !down || !r.serverGone.CompareAndSwap(false, true) {
		return down
	}
	v := verdict{rule: check.Crash, shape: "server_gone", rules: check.Set(0).Add(check.Crash),
		note: "the server stopped serving (" + why + ") after these inputs; it has to be restarted to go on"}
	cand := candidate{in: in, v: v, execN: r.execCount(), confirmed: true, fromCanary: true,
		note: "the suspects are the last inputs in flight, one per worker; not confirmed nor minimized (nothing is left to test against): give the server command (--server-cmd) to have rpcfuzz restart the server and find which one kills it"}
	for _, s := range suspects[1:] {
		if !sameCase(s, in) {
			cand.suspects = append(cand.suspects, s)
		}
	}
	cand.key = dedupKey(v)
	cand.id = findingID(v.rule, cand.key)
	r.report(w, cand)
	r.fatal(fmt.Sprintf("the server at %s stopped serving (%s): restart it to go on, or give --server-cmd so that rpcfuzz starts it and restarts it after each crash", r.cfg.Target.URL, why))
	return true
}

// goneTries is how many times a server that seems gone is tried, a
// little apart, before it is: a refused connection may be a full accept
// queue.
const goneTries = 3

// probeGone tells whether the network server is gone: its address
// refuses connections, or every fresh connection is reset (the canary on
// a connection of its own ends that way), goneTries times in a row.
func (r *run) probeGone(w *worker) (string, bool) {
	ctx := r.boundCtx()
	network, addr, err := listenAddr(r.cfg.Target)
	if err != nil {
		return "", false
	}
	why := ""
	wait := redialWait
	for try := range goneTries {
		if try > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return "", false
			}
			wait *= 2
		}
		d := net.Dialer{Timeout: max(r.cfg.Timeout, time.Second)}
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			if !refused(err) {
				return "", false
			}
			why = "connection refused at " + addr
			continue
		}
		_ = c.Close()
		if r.canary == nil {
			return "", false // it accepts: alive as far as can be told
		}
		switch cr := r.canaryOn(ctx, w, true); cr.o.end {
		case endReset, endClosed, endUnreachable:
			why = "every connection reset: " + cr.o.note
		default:
			return "", false
		}
	}
	return why, true
}

// writeSuspects writes each suspect to suspect-N.json (case.json's format:
// `rpcfuzz replay` takes it once copied over case.json) and names the
// files in f.
func writeSuspects(dir string, f *Finding, suspects []mutate.Case) error {
	if len(suspects) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, s := range suspects {
		b, err := encodeCase(s)
		if err != nil {
			return err
		}
		name := "suspect-" + strconv.Itoa(i+1) + ".json"
		if err := stats.WriteFileAtomic(filepath.Join(dir, name), b); err != nil {
			return err
		}
		f.Suspects = append(f.Suspects, name)
	}
	return nil
}
