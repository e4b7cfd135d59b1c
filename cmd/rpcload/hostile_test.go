package main

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// hostileServer accepts TCP connections on 127.0.0.1 and hands each to
// handle in its own goroutine. Cleanup closes the listener and every
// connection and waits for the handlers.
func hostileServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // guards conns
		conns = map[net.Conn]struct{}{}
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// perRequestLine calls reply once for each request line the client sends,
// until reading or reply fails.
func perRequestLine(reply func(net.Conn) error) func(net.Conn) {
	return func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := br.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
				return
			}
			if reply(c) != nil {
				return
			}
		}
	}
}

const hugeLine = 100 << 20

var hugeChunk = bytes.Repeat([]byte("a"), 64<<10)

// writeHugeLine writes one 100 MB line in chunks.
func writeHugeLine(c net.Conn) error {
	for n := 0; n < hugeLine; n += len(hugeChunk) {
		if _, err := c.Write(hugeChunk); err != nil {
			return err
		}
	}
	_, err := c.Write([]byte("\n"))
	return err
}

// TestHostileServers: what a misbehaving server does is counted, the run
// ends on time, and the exit code follows the documented rules.
func TestHostileServers(t *testing.T) {
	tests := []struct {
		name   string
		scheme string
		handle func(net.Conn)
		args   []string
		check  func(t *testing.T, c child, res *stats.Result)
	}{
		{
			name: "100 MB lines", scheme: "tcp",
			handle: perRequestLine(writeHugeLine),
			args:   []string{"--max-frame", "1MiB", "--duration", "300ms", "--timeout", "200ms"},
			check: func(t *testing.T, c child, r *stats.Result) {
				if r.Violations["frame_too_large"] == 0 {
					t.Errorf("no frame_too_large counted: %v", r.Violations)
				}
				if c.code != exitFindings {
					t.Errorf("want exit 1; %v", c)
				}
				if rss := c.peakRSS; rss > 0 {
					t.Logf("peak RSS of the child: %d MiB", rss>>20)
					if rss > 80<<20 {
						t.Errorf("peak RSS %d MiB: a 100 MB line was buffered despite --max-frame 1MiB", rss>>20)
					}
				}
			},
		},
		{
			name: "garbage lines", scheme: "tcp",
			handle: perRequestLine(func(c net.Conn) error {
				_, err := c.Write([]byte("this is not JSON }{\n"))
				return err
			}),
			args: []string{"--duration", "300ms", "--timeout", "200ms"},
			check: func(t *testing.T, c child, r *stats.Result) {
				if r.Violations["invalid_json"] == 0 {
					t.Errorf("no invalid_json counted: %v", r.Violations)
				}
				if r.Requests.Answered != 0 || r.Requests.Timeouts == 0 {
					t.Errorf("garbage answered something, or nothing timed out: %+v", r.Requests)
				}
				if c.code != exitFindings {
					t.Errorf("want exit 1; %v", c)
				}
			},
		},
		{
			name: "close on accept tcp", scheme: "tcp",
			handle: func(net.Conn) {},
			args:   []string{"--duration", "300ms", "--timeout", "200ms"},
			check:  checkTransportErrorsOnly,
		},
		{
			name: "close on accept http", scheme: "http",
			handle: func(net.Conn) {},
			args:   []string{"--duration", "300ms", "--timeout", "200ms", "--conns", "4"},
			check:  checkTransportErrorsOnly,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := hostileServer(t, tt.handle)
			target := tt.scheme + "://" + addr
			if tt.scheme == "http" {
				target += "/"
			}
			out := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"run", target, "--method", "echo", "--rate", "500", "-q", "-o", out}, tt.args...)
			c := runBinary(t, childLimit, args...)
			if c.elapsed > 5*time.Second {
				t.Errorf("the run took %s", c.elapsed)
			}
			res := readResult(t, out)
			tt.check(t, c, res)
			if t.Failed() {
				t.Logf("%v", c)
			}
		})
	}
}

// checkTransportErrorsOnly: a server that hangs up at once causes transport
// errors and nothing else, and those alone fail the run.
func checkTransportErrorsOnly(t *testing.T, c child, r *stats.Result) {
	if r.Requests.TransportErrors == 0 || r.Requests.Answered != 0 {
		t.Errorf("want transport errors and no answers: %+v", r.Requests)
	}
	if want := wantFindingsExit(r); c.code != want || want != exitFindings {
		t.Errorf("exit %d, the documented rules give %d for %+v violations %v", c.code, want, r.Requests, r.Violations)
	}
	t.Logf("exit %d with %d transport errors, %d timeouts, %d leaked, violations %v",
		c.code, r.Requests.TransportErrors, r.Requests.Timeouts, r.Requests.Leaked, r.Violations)
	mustContain(t, "report", c.stdout, "transport errors seen")
}

// TestHTTPBodyTooLarge: going past a size limit the user set is a counted
// violation (DESIGN.md section 3), over HTTP as over TCP.
func TestHTTPBodyTooLarge(t *testing.T) {
	body := bytes.Repeat([]byte(" "), 2<<20)
	copy(body, `{"jsonrpc":"2.0","id":1,"result":1}`)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	out := filepath.Join(t.TempDir(), "result.json")
	c := runBinary(t, childLimit, "run", "http://"+ln.Addr().String()+"/", "--method", "echo", "--rate", "100",
		"--duration", "300ms", "--max-frame", "1MiB", "-q", "-o", out)
	res := readResult(t, out)
	if res.Violations["frame_too_large"] == 0 || c.code != exitFindings {
		t.Errorf("want frame_too_large counted and exit 1; got %v, requests %+v; %v", res.Violations, res.Requests, c)
	}
}
