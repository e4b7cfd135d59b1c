package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// childLimit bounds every child run; the runs themselves last well under a second.
const childLimit = 20 * time.Second

// TestRunAgainstReferenceServer: a fault-free server gives exit 0, a clean
// report and a complete result file, over both transports and both loops.
func TestRunAgainstReferenceServer(t *testing.T) {
	tests := []struct {
		name, transport string
		args            []string
	}{
		{"tcp open loop", "tcp", []string{"--rate", "500"}},
		{"http open loop", "http", []string{"--rate", "500"}},
		{"tcp closed loop string ids", "tcp", []string{"--concurrency", "8", "--id-format", "string"}},
		{"http closed loop", "http", []string{"--concurrency", "4", "--conns", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, httpURL, tcpURL := startServer(t, testsrv.Config{})
			target := map[string]string{"tcp": tcpURL, "http": httpURL}[tt.transport]
			out := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"run", target, "--method", "echo", "--params", `[1,"a"]`, "--duration", "300ms", "-q", "-o", out}, tt.args...)
			c := runBinary(t, childLimit, args...)
			if c.code != exitOK {
				t.Fatalf("want exit 0; %v", c)
			}
			mustContain(t, "report", c.stdout, "violations  none", "target      "+target)
			res := readResult(t, out)
			q := res.Requests
			if q.Sent == 0 || q.OK != q.Sent || q.Answered != q.Sent {
				t.Errorf("requests = %+v; want sent > 0 and ok == answered == sent", q)
			}
			if q.TransportErrors+q.Timeouts+q.Leaked+q.Late+q.Dropped != 0 || len(res.Violations) != 0 {
				t.Errorf("a fault-free run saw problems: %+v, violations %v", q, res.Violations)
			}
			if res.Latency.Corrected.Count != int64(q.Sent) {
				t.Errorf("latency.corrected.count = %d, want %d", res.Latency.Corrected.Count, q.Sent)
			}
			echo, ok := res.Methods["echo"]
			if !ok {
				t.Fatalf("methods has no echo: %v", res.Methods)
			}
			if echo.Requests.OK != q.Sent {
				t.Errorf("methods.echo.requests.ok = %d, want %d", echo.Requests.OK, q.Sent)
			}
			if res.Target != target || res.Interrupted || res.Settings["method"] != "echo" {
				t.Errorf("target %q interrupted %v settings %v", res.Target, res.Interrupted, res.Settings)
			}
			if n := srv.Requests(); n < q.Sent {
				t.Errorf("server handled %d frames, client sent %d", n, q.Sent)
			}
		})
	}
}

// TestRunFindsDuplicates: an injected fault fails the run (exit 1) unless
// --allow-violations, and the count matches what the server injected.
func TestRunFindsDuplicates(t *testing.T) {
	for _, transport := range []string{"tcp", "http"} {
		for _, allow := range []bool{false, true} {
			name := transport
			if allow {
				name += " allow-violations"
			}
			t.Run(name, func(t *testing.T) {
				srv, httpURL, tcpURL := startServer(t, testsrv.Config{
					Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultDuplicate, Prob: 0.1}}, Seed: 7,
				})
				target := map[string]string{"tcp": tcpURL, "http": httpURL}[transport]
				out := filepath.Join(t.TempDir(), "result.json")
				args := []string{"run", target, "--method", "echo", "--params", "[1]", "--rate", "500", "--duration", "300ms", "-q", "-o", out}
				want := exitFindings
				if allow {
					args, want = append(args, "--allow-violations"), exitOK
				}
				c := runBinary(t, childLimit, args...)
				srv.Close() // waits for the server's goroutines, so Injected is final
				if c.code != want {
					t.Fatalf("want exit %d; %v", want, c)
				}
				injected := srv.Injected()[testsrv.FaultDuplicate]
				res := readResult(t, out)
				if injected == 0 {
					t.Fatalf("the server injected no duplicate in %d requests", res.Requests.Sent)
				}
				if got := res.Violations["duplicate_reply"]; got != injected {
					t.Errorf("violations.duplicate_reply = %d, server injected %d", got, injected)
				}
				if q := res.Requests; q.OK != q.Sent {
					t.Errorf("a duplicate reply still answers its request: %+v", q)
				}
				mustContain(t, "report", c.stdout, "duplicate_reply")
			})
		}
	}
}

// TestRunUnreachable: nothing listening gives exit 3 and no result file.
func TestRunUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, target := range []string{"tcp://127.0.0.1:1", "http://127.0.0.1:1/", "tcp://" + closed, "http://" + closed + "/"} {
		t.Run(target, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			c := runBinary(t, childLimit, "run", target, "--method", "echo", "--duration", "200ms", "-o", out)
			if c.code != exitUnreachable {
				t.Fatalf("want exit 3; %v", c)
			}
			mustContain(t, "stderr", c.stderr, "unreachable", target)
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("an unreachable run wrote %s (%v)", out, err)
			}
		})
	}
}

// TestDemo: the bare command load-tests the embedded server.
func TestDemo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"bare", []string{"--duration", "1s", "-q"}, exitOK, []string{"violations  none", "open loop", "target      tcp://127.0.0.1:"}},
		{"http", []string{"--duration", "300ms", "-q", "--transport", "http", "--rate", "300"}, exitOK, []string{"violations  none", "target      http://127.0.0.1:"}},
		{"demo subcommand closed loop", []string{"demo", "--duration", "300ms", "-q", "--concurrency", "4"}, exitOK, []string{"violations  none", "closed loop"}},
		{"fault", []string{"--duration", "300ms", "-q", "--rate", "1000", "--fault", "duplicate=0.1"}, exitFindings, []string{"duplicate_reply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runBinary(t, childLimit, tt.args...)
			if c.code != tt.code {
				t.Fatalf("want exit %d; %v", tt.code, c)
			}
			mustContain(t, "report", c.stdout, tt.want...)
			mustContain(t, "stderr", c.stderr, "embedded reference server")
			if strings.Contains(c.stderr, "answered") {
				t.Errorf("-q printed progress lines:\n%s", c.stderr)
			}
		})
	}
}
