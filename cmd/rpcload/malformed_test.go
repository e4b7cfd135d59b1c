package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"encoding/json"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// malformedLoad is a short open-loop load with 5% of its calls malformed.
func malformedLoad(target, out, findings string) []string {
	return []string{"run", target, "--method", "echo", "--params", `[1,"a"]`, "--rate", "1000", "--duration", "2s",
		"--mutate-fraction", "5%", "--mutate-out", findings, "--seed", "7", "-q", "-o", out}
}

// TestMalformedParseErrorID: against a server that answers every parse
// error with id 0 instead of null, the malformed traffic counts exactly as
// many such replies as the server sent; against the correct server, the
// same run finds nothing, and the load's own figures never include the
// malformed calls.
func TestMalformedParseErrorID(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  testsrv.Config
	}{{"correct", testsrv.Config{}}, {"an id on parse errors", testsrv.Config{ParseErrorID: []byte("4242424242")}}} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, tcpURL := startServer(t, tt.cfg)
			dir := t.TempDir()
			out, findings := filepath.Join(dir, "r.json"), filepath.Join(dir, "findings")
			c := runBinary(t, time.Minute, malformedLoad(tcpURL, out, findings)...)
			res := readResult(t, out)
			m := res.Malformed
			if m == nil {
				t.Fatalf("no malformed section\n%s", c)
			}
			if m.Dropped != 0 || m.Inputs != m.Queued || m.Inputs != res.Requests.Diverted || m.Inputs < 50 {
				t.Fatalf("diverted %d, queued %d, dropped %d, sent %d: want every diverted call sent (about 100)", res.Requests.Diverted, m.Queued, m.Dropped, m.Inputs)
			}
			if q := res.Requests; q.Messages+q.Diverted != 2000 || len(res.Violations) != 0 || q.OK != q.Sent {
				t.Errorf("the load: %d messages + %d diverted (want 2000), violations %v, %d ok of %d", q.Messages, q.Diverted, res.Violations, q.OK, q.Sent)
			}
			logged := srv.ParseErrorIDs()
			if tt.cfg.ParseErrorID == nil {
				if len(m.Rules) != 0 || len(m.Findings) != 0 || c.code != exitOK {
					t.Fatalf("a correct server: rules %v, findings %v, exit %d\n%s", m.Rules, m.Findings, c.code, c)
				}
				return
			}
			if logged == 0 {
				t.Fatal("the server answered no parse error: no input was unparseable")
			}
			if m.ParseErrorIDs != logged || m.Rules["wrong_error_code"] == 0 {
				t.Errorf("parse errors with an id %d, rules %v; want %d (the parse errors the server answered with its id), and wrong_error_code", m.ParseErrorIDs, m.Rules, logged)
			}
			if len(m.Findings) == 0 || c.code != exitFindings {
				t.Fatalf("findings %v, exit %d: want a finding and exit 1\n%s", m.Findings, c.code, c)
			}
			if _, err := os.Stat(filepath.Join(m.Findings[0].Dir, "finding.json")); err != nil {
				t.Errorf("finding directory: %v", err)
			}
			// rpcfuzz reads the finding as one of its own.
			rc := runChild(rpcfuzzBinary(t), time.Minute, []string{"replay", m.Findings[0].Dir})
			if rc.code != exitFindings || !strings.Contains(rc.stdout+rc.stderr, "REPRODUCED") {
				t.Errorf("rpcfuzz replay of %s: %s", m.Findings[0].Dir, rc)
			}
			mustContain(t, "stdout", c.stdout, "malformed   5% of the calls made malformed (seed 7)", "wrong_error_code")
		})
	}
}

// racyServer answers newline-delimited JSON-RPC over TCP as the reference
// server does, with a planted bug that needs two connections at once: each
// frame is parsed for parseTime, and a frame that fails to parse while
// another connection is parsing kills the server (every connection and the
// listener close at once, as a process that crashed). A client that sends
// one frame at a time on one connection never meets it.
type racyServer struct {
	ln      net.Listener
	ref     *testsrv.Server
	parsing atomic.Int32
	crashed atomic.Bool
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
}

const parseTime = 300 * time.Microsecond

func startRacyServer(t *testing.T) *racyServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := testsrv.New(testsrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := &racyServer{ln: ln, ref: ref, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { s.crash(); ref.Close() })
	go s.serve()
	return s
}

func (s *racyServer) url() string { return "tcp://" + s.ln.Addr().String() }

func (s *racyServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

func (s *racyServer) serveConn(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		frame := sc.Bytes()
		s.parsing.Add(1)
		time.Sleep(parseTime)
		if !json.Valid(frame) && s.parsing.Load() > 1 {
			s.crash()
			return
		}
		reply, ok := s.ref.HandleFrame(nil, frame)
		s.parsing.Add(-1)
		if ok {
			if _, err := c.Write(append(reply, '\n')); err != nil {
				return
			}
		}
	}
}

// crash ends the server as a crashed process would: everything closes.
func (s *racyServer) crash() {
	s.crashed.Store(true)
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// TestMalformedConcurrentCrash: a crash that needs two connections parsing
// at once is found by load with malformed traffic, and written as a
// finding with the input that was in flight, but not by a serial rpcfuzz
// run against the same server.
func TestMalformedConcurrentCrash(t *testing.T) {
	t.Run("serial rpcfuzz", func(t *testing.T) {
		s := startRacyServer(t)
		out := t.TempDir()
		c := runChild(rpcfuzzBinary(t), time.Minute, []string{"run", s.url(), "--workers", "1", "--duration", "4s", "-o", out, "--seed", "1"})
		sum, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatalf("%v\n%s", err, c)
		}
		if s.crashed.Load() || strings.Contains(string(sum), `"rule": "crash"`) {
			t.Fatalf("a serial run crashed the server\n%s", sum)
		}
		var execs struct{ Execs uint64 }
		if err := json.Unmarshal(sum, &execs); err != nil || execs.Execs < 100 {
			t.Fatalf("the serial run sent %d inputs (%v)", execs.Execs, err)
		}
	})
	t.Run("load with malformed traffic", func(t *testing.T) {
		s := startRacyServer(t)
		dir := t.TempDir()
		out, findings := filepath.Join(dir, "r.json"), filepath.Join(dir, "findings")
		c := runBinary(t, time.Minute, malformedLoad(s.url(), out, findings)...)
		if !s.crashed.Load() {
			t.Fatalf("the server did not crash\n%s", c)
		}
		res := readResult(t, out)
		m := res.Malformed
		var crash *stats.MalformedFinding
		for i := range m.Findings {
			if m.Findings[i].Rule == "crash" {
				crash = &m.Findings[i]
			}
		}
		if crash == nil || c.code != exitFindings {
			t.Fatalf("findings %+v, exit %d: want a crash finding and exit 1\n%s", m.Findings, c.code, c)
		}
		input, err := os.ReadFile(filepath.Join(crash.Dir, "input.bin"))
		if err != nil || len(input) == 0 {
			t.Fatalf("the finding has no input in flight: %v", err)
		}
		t.Logf("crash finding %s, note %q, input %q", crash.ID, crash.Note, input)
	})
}

// TestMalformedScenarioRaw: a scenario's raw frame (a parse error every
// time) is sent on the malformed connections only, and a server that
// answers it with an id is caught every time it does.
func TestMalformedScenarioRaw(t *testing.T) {
	srv, _, tcpURL := startServer(t, testsrv.Config{ParseErrorID: []byte("4242424242")})
	dir := t.TempDir()
	scen := filepath.Join(dir, "raw.yaml")
	src := "version: 1\nseed: 3\nload: {rate: 500, duration: 2s}\nmix:\n" +
		"  - {method: echo, params: [1], weight: 9}\n" +
		"  - {name: cut, raw: '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"'}\n"
	if err := os.WriteFile(scen, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	c := runBinary(t, time.Minute, "run", "-f", scen, tcpURL, "-q", "-o", out)
	res := readResult(t, out)
	m, q := res.Malformed, res.Requests
	if m == nil || m.Inputs != q.Diverted || q.Diverted < 50 || q.Messages+q.Diverted != 1000 {
		t.Fatalf("diverted %d of 1000, malformed %+v\n%s", q.Diverted, m, c)
	}
	if _, ok := res.Methods["cut"]; ok || len(res.Violations) != 0 {
		t.Errorf("the raw call shows in the load's figures: methods %v, violations %v", stats.SortedKeys(res.Methods), res.Violations)
	}
	if logged := srv.ParseErrorIDs(); m.ParseErrorIDs != logged || logged < m.Inputs {
		t.Errorf("parse errors with an id: counted %d, the server sent %d, inputs %d", m.ParseErrorIDs, logged, m.Inputs)
	}
	if c.code != exitFindings || len(m.Findings) == 0 {
		t.Errorf("exit %d, findings %v", c.code, m.Findings)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.findings")); err != nil {
		t.Errorf("findings not next to -o: %v", err)
	}
}
