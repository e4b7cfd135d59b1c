package interop

// rpcload against the TypeScript MCP reference server
// @modelcontextprotocol/server-everything (npm; the version pinned in
// node/package.json, installed by .ci/interop-deps), over stdio and over
// Streamable HTTP.
//
// What the server does, seen by hand (a small Go pipe for stdio, curl for
// HTTP) with server-everything 2026.8.31, which is built on the TypeScript
// SDK @modelcontextprotocol/sdk 1.32.2:
//
//   - It speaks the legacy era only. The SDK's newest revision is
//     2025-11-25 (it also accepts 2025-06-18, 2025-03-26, 2024-11-05,
//     2024-10-07); it knows nothing of 2026-07-28.
//   - stdio, a server/discover probe with the full modern _meta before
//     initialize: {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":
//     "Method not found"}}, so a dual-era client falls back to legacy.
//     initialize {protocolVersion:"2025-11-25"} is answered with
//     protocolVersion "2025-11-25". After notifications/initialized the
//     server registers its capability-dependent tools and sends
//     notifications/tools/list_changed once. It writes its log line
//     ("Starting default (STDIO) server...") to stderr only. It exits when
//     its stdin closes, unless simulated logging is on (then its interval
//     timer keeps it alive until SIGTERM).
//   - Streamable HTTP (dist/index.js streamableHttp, on /mcp): the port
//     comes from $PORT (default 3001) and the server calls app.listen(PORT)
//     without a host, i.e. it binds every interface. The tests preload
//     node/loopback.cjs, which makes it bind 127.0.0.1 and report the
//     ephemeral port it got for PORT=0 (checked below in /proc/net/tcp*).
//   - HTTP, a modern-era POST (server/discover or tools/call with the
//     2026-07-28 _meta, MCP-Protocol-Version: 2026-07-28, Mcp-Method, no
//     session): 400, application/json, {"jsonrpc":"2.0","error":{"code":
//     -32000,"message":"Bad Request: Server not initialized"},"id":null}. A
//     400 that is not a modern error (-32020..-32022) means legacy.
//   - HTTP, initialize without a session: 200, text/event-stream, header
//     mcp-session-id: <uuid>. Every later POST needs Mcp-Session-Id: without
//     it the server starts a fresh, uninitialized session and answers 400
//     -32000 "Server not initialized"; an unknown id gets 400 -32000 "No
//     valid session ID provided" (and no id member). MCP-Protocol-Version
//     2026-07-28 inside a session: 400 -32000 "Unsupported protocol
//     version". A POST whose Accept lacks text/event-stream: 406.
//   - HTTP replies to requests are always text/event-stream, never
//     application/json: first a priming event with an id and an empty data
//     line (id: <uuid>\ndata: \n\n; MCP 2025-11-25 says a server SHOULD
//     send it so that the client can resume with Last-Event-ID; it carries
//     no JSON-RPC message, and the SDK's own client skips events with empty
//     data), then "event: message" with the request's notifications (e.g.
//     notifications/progress) and the response. notifications/initialized
//     gets 202 with no body. Notifications not tied to a request
//     (tools/list_changed, the simulated log messages) go only to the
//     standalone GET stream, which rpcload does not open, so over HTTP they
//     are never seen.
//   - The "log messages on a timer" (notifications/message) are sent only
//     after a client calls the tool toggle-simulated-logging: one at once,
//     then one every 5 s. The tool toggles, so every other call starts it.
//   - Tools (tools/list): echo {message} -> "Echo: <message>",
//     get-sum {a,b}, trigger-long-running-operation {duration,steps}
//     (with _meta.progressToken it sends `steps` notifications/progress
//     before its result), toggle-simulated-logging, and others. No tool
//     result carries resultType (a legacy server; rpcload's
//     mcp_bad_result_type concerns modern results).

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// missingDep skips the test because an outside server is not installed, or
// fails it when RPCLOAD_INTEROP_STRICT=1 (as CI runs the tests, after
// .ci/interop-deps), so that a missing install step cannot pass unseen.
func missingDep(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...) + "; run .ci/interop-deps to install it"
	if os.Getenv("RPCLOAD_INTEROP_STRICT") == "1" {
		t.Fatal(msg + " (RPCLOAD_INTEROP_STRICT=1: not skipped)")
	}
	t.Skip(msg)
}

// everything is an installed server-everything.
type everything struct {
	node     string // the node binary
	script   string // .../server-everything/dist/index.js
	loopback string // node/loopback.cjs, preloaded for HTTP
	version  string
}

const everythingPkg = "@modelcontextprotocol/server-everything"

// findEverything finds node and the server-everything version pinned in
// node/package.json under node/node_modules, or skips (see missingDep).
func findEverything(t *testing.T) everything {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(wd, "node")
	var manifest struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatalf("the npm manifest of the interop servers: %v", err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatalf("node/package.json: %v", err)
	}
	pinned := manifest.Dependencies[everythingPkg]
	if pinned == "" {
		t.Fatalf("node/package.json does not pin %s", everythingPkg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missingDep(t, "node (Node.js) is not on PATH")
	}
	pkg := filepath.Join(dir, "node_modules", filepath.FromSlash(everythingPkg))
	raw, err = os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		missingDep(t, "%s is not installed in %s", everythingPkg, dir)
	}
	manifest.Version = ""
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatalf("%s/package.json: %v", pkg, err)
	}
	if manifest.Version != pinned {
		missingDep(t, "%s %s is installed in %s, but node/package.json pins %s", everythingPkg, manifest.Version, dir, pinned)
	}
	e := everything{node: node, script: filepath.Join(pkg, "dist", "index.js"),
		loopback: filepath.Join(dir, "loopback.cjs"), version: pinned}
	for _, f := range []string{e.script, e.loopback} {
		if _, err := os.Stat(f); err != nil {
			missingDep(t, "%v", err)
		}
	}
	return e
}

// startHTTP starts `node --require loopback.cjs dist/index.js streamableHttp`
// with PORT=0, waits for the address it reports, checks that every listening
// socket on that port is a loopback address, and returns the endpoint URL.
// The server is stopped (SIGINT, then SIGKILL after 5 s) when t ends; its
// stdout and stderr are kept in a file whose tail is logged if t failed.
func (e everything) startHTTP(t *testing.T) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	addrs := make(chan string, 1)
	stderr := &markerWriter{w: logFile, prefix: "rpcload-interop: listening on ", found: addrs}
	cmd := exec.Command(e.node, "--require", e.loopback, e.script, "streamableHttp")
	// GZIP_ALLOWED_DOMAINS: the tool gzip-file-as-resource fetches any
	// http(s) URL it is given (by default a README on GitHub), and the
	// fuzz runs call it with the URLs they make up: only a domain that
	// cannot resolve (RFC 6761's .invalid) is allowed, so no call leaves
	// the machine (data: URLs still work), and a fetch gives up in 1 s.
	cmd.Env = append(os.Environ(), "PORT=0", "GZIP_ALLOWED_DOMAINS=rpcload.invalid", "GZIP_MAX_FETCH_TIME_MILLIS=1000")
	cmd.Dir = t.TempDir()
	cmd.Stdout = logFile // one line per POST: it must be read, or node blocks on a full pipe
	cmd.Stderr = stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", e.script, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// SIGINT: the server's own handler closes its sessions and exits 0.
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			t.Logf("server-everything (HTTP) log, last lines:\n%s", tailFile(logPath, 30))
		}
	})
	var addr string
	select {
	case addr = <-addrs:
	case err := <-exited:
		exited <- err
		t.Fatalf("server-everything (HTTP) exited before listening: %v\n%s", err, tailFile(logPath, 30))
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything (HTTP) did not report its address within 30 s\n%s", tailFile(logPath, 30))
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("server-everything (HTTP) listens on %q, want 127.0.0.1:PORT", addr)
	}
	port, _ := strconv.Atoi(portStr)
	listeners, err := tcpListeners(port)
	switch {
	case err != nil:
		t.Logf("cannot check the listening sockets: %v", err)
	case len(listeners) == 0:
		t.Fatalf("no listening socket on port %d in /proc/net/tcp*", port)
	default:
		for _, ip := range listeners {
			if !ip.IsLoopback() {
				t.Fatalf("a socket listens on %s port %d: the server must bind loopback only (listeners %v)", ip, port, listeners)
			}
		}
	}
	t.Logf("server-everything %s (Streamable HTTP) on http://%s/mcp, bound to %v", e.version, addr, listeners)
	return "http://" + addr + "/mcp"
}

// markerWriter copies a child's output to w and sends the rest of the first
// line that starts with prefix to found.
type markerWriter struct {
	w      io.Writer
	prefix string
	found  chan<- string
	mu     sync.Mutex
	line   []byte
	done   bool
}

func (m *markerWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		m.line = append(m.line, p...)
		for {
			i := bytes.IndexByte(m.line, '\n')
			if i < 0 {
				break
			}
			if rest, ok := strings.CutPrefix(string(m.line[:i]), m.prefix); ok {
				m.found <- strings.TrimSpace(rest)
				m.done, m.line = true, nil
				break
			}
			m.line = m.line[i+1:]
		}
	}
	return m.w.Write(p)
}

// tcpListeners returns the local addresses of the TCP sockets in LISTEN
// state on port, from /proc/net/tcp and /proc/net/tcp6.
func tcpListeners(port int) ([]net.IP, error) {
	var ips []net.IP
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		raw, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) && f == "/proc/net/tcp6" {
			continue // no IPv6
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			hexIP, hexPort, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); !ok || err != nil || int(p) != port {
				continue
			}
			b, err := hex.DecodeString(hexIP)
			if err != nil || (len(b) != 4 && len(b) != 16) {
				return nil, fmt.Errorf("%s: bad address %q", f, fields[1])
			}
			// The kernel prints each 32-bit word in host (little-endian) order.
			for i := 0; i < len(b); i += 4 {
				b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
			}
			ips = append(ips, net.IP(b))
		}
	}
	return ips, nil
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// profileCase is a loadCase for a run with a protocol profile (mcp, lsp):
// besides what loadCase.check asserts, it judges the result file's profile
// section and the methods the server sent.
type profileCase struct {
	loadCase
	// command is the child's command line (after "--"); nil when args
	// hold a URL target.
	command       []string
	profile       string // profile.name
	era, version  string // profile.era and profile.version; "" is not checked
	minHandshakes int64  // at least this many handshakes (one per connection)
	// minAnswered: at least this many requests from the server answered
	// by rpcload (profile.server_requests_answered).
	minAnswered int64
	// serverMethods: at least this many messages of each method from the
	// server (server_methods); 0 means "more than zero".
	serverMethods map[string]int64
	// also is called with the result for case-specific checks.
	also func(t *testing.T, r *result)
}

// run runs c and asserts as loadCase.check does, then the profile section
// and server_methods; it returns the result.
func (c profileCase) run(t *testing.T) *result {
	t.Helper()
	var (
		r      *result
		code   int
		report string
	)
	if c.command != nil {
		r, code, report = runLoadCmd(t, c.args, c.command)
	} else {
		r, code, report = runLoad(t, c.args)
	}
	defer func() {
		if t.Failed() {
			t.Logf("rpcload's report:\n%s", report)
		}
	}()
	c.judge(t, r, code)
	p := r.Profile
	t.Logf("profile %+v; server messages %d %v", p, r.Requests.ServerMessages, r.ServerMethods)
	if r.Child != nil && len(r.Child.Exits) > 0 {
		t.Logf("child exits: %q", r.Child.Exits)
	}
	if p == nil {
		t.Errorf("the result file has no profile section")
		return r
	}
	if p.Name != c.profile {
		t.Errorf("profile.name = %q, want %q", p.Name, c.profile)
	}
	if c.era != "" && p.Era != c.era {
		t.Errorf("profile.era = %q, want %q", p.Era, c.era)
	}
	if c.version != "" && p.Version != c.version {
		t.Errorf("profile.version = %q, want %q", p.Version, c.version)
	}
	if p.Handshakes < c.minHandshakes {
		t.Errorf("profile.handshakes = %d, want >= %d (one per connection)", p.Handshakes, c.minHandshakes)
	}
	if p.ServerRequestsAnswered < c.minAnswered {
		t.Errorf("profile.server_requests_answered = %d, want >= %d", p.ServerRequestsAnswered, c.minAnswered)
	}
	var sum int64
	for _, n := range r.ServerMethods {
		sum += n
	}
	if sum != r.Requests.ServerMessages {
		t.Errorf("server_methods %v add up to %d, but requests.server_messages = %d", r.ServerMethods, sum, r.Requests.ServerMessages)
	}
	methods := make([]string, 0, len(c.serverMethods))
	for m := range c.serverMethods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		want, got := c.serverMethods[m], r.ServerMethods[m]
		if want == 0 && got == 0 || got < want {
			t.Errorf("server_methods[%q] = %d, want >= %d (all: %v)", m, got, max(want, 1), r.ServerMethods)
		}
	}
	if c.also != nil {
		c.also(t, r)
	}
	return r
}

// The arguments of the tool calls the MCP runs make.
const (
	echoArgs = `{"message":"hello from rpcload"}`
	// trigger-long-running-operation: 2 steps of 10 ms, each announced by
	// notifications/progress before the result (the progress token asks for
	// them). The token is the same on every call, so each connection keeps
	// one call in flight: a token must be unique among active requests.
	progressSteps  = 2
	progressParams = `{"name":"trigger-long-running-operation","arguments":{"duration":0.02,"steps":2},"_meta":{"progressToken":"rpcload"}}`
)

// slowArgs: trigger-long-running-operation without a progress token, one
// step of 20 ms: a call that stays in flight across the server's event loop
// turns (a timer), unlike echo, whose whole POST is handled in one turn.
const slowArgs = `{"duration":0.02,"steps":1}`

// progressSeen asserts that every answered long-running call's progress
// notifications were counted as server messages, not taken for replies.
func progressSeen(t *testing.T, r *result) {
	t.Helper()
	if got, want := r.ServerMethods["notifications/progress"], progressSteps*r.Requests.OK; got < want {
		t.Errorf("notifications/progress = %d, want >= %d (%d per answered call)", got, want, progressSteps)
	}
}

// TestEverythingStdio runs rpcload with the mcp profile against
// server-everything as a child process on stdio: tools/call echo with two
// children, tools/list, a tool that sends progress notifications before its
// result, a slow tool with four calls in flight, and the tool that turns on
// simulated logging. The server speaks MCP 2025-11-25 (legacy era;
// server/discover is -32601) and breaks no rule rpcload checks.
func TestEverythingStdio(t *testing.T) {
	e := findEverything(t)
	t.Logf("server-everything %s: %s %s stdio", e.version, e.node, e.script)
	child := []string{e.node, e.script, "stdio"}
	mcp := func(extra ...string) []string { return append([]string{"--profile", "mcp"}, extra...) }
	cases := []profileCase{
		{
			loadCase: loadCase{name: "echo", args: mcp("--tool", "echo", "--args", echoArgs,
				"--concurrency", "8", "--conns", "2", "--duration", "2s")},
			minHandshakes: 2,
			serverMethods: map[string]int64{"notifications/tools/list_changed": 2}, // one per child, after initialized
		},
		{
			loadCase: loadCase{name: "tools-list", args: mcp("--method", "tools/list",
				"--concurrency", "4", "--duration", "1s")},
			minHandshakes: 1,
			serverMethods: map[string]int64{"notifications/tools/list_changed": 1},
		},
		{
			loadCase: loadCase{name: "progress", args: mcp("--method", "tools/call", "--params", progressParams,
				"--concurrency", "1", "--duration", "1s")},
			minHandshakes: 1,
			serverMethods: map[string]int64{"notifications/progress": 0},
			also:          progressSeen,
		},
		{
			loadCase: loadCase{name: "slow-tool", args: mcp("--tool", "trigger-long-running-operation", "--args", slowArgs,
				"--concurrency", "4", "--duration", "1s")},
			minHandshakes: 1,
		},
		{
			// Every other call starts simulated logging, which sends one
			// notifications/message at once (before the call's result).
			// With logging left on, the child ignores its closed stdin and
			// is ended by rpcload's SIGTERM after --grace.
			loadCase: loadCase{name: "simulated-logging", args: mcp("--tool", "toggle-simulated-logging", "--args", "{}",
				"--concurrency", "1", "--duration", "1s", "--grace", "500ms")},
			minHandshakes: 1,
			serverMethods: map[string]int64{"notifications/message": 0},
			also: func(t *testing.T, r *result) {
				if got, want := r.ServerMethods["notifications/message"], (r.Requests.OK+1)/2; got < want {
					t.Errorf("notifications/message = %d, want >= %d (one per call that started logging, of %d calls)", got, want, r.Requests.OK)
				}
			},
		},
	}
	for _, c := range cases {
		c.command = child
		c.profile, c.era, c.version = "mcp", "legacy", "2025-11-25"
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

// TestEverythingHTTP runs rpcload with the mcp profile against
// server-everything's Streamable HTTP transport on 127.0.0.1: tools/call
// echo, tools/list, the progress tool, whose notifications come in the same
// text/event-stream response as its result, and a slow tool with four calls
// in flight. rpcload opens one legacy session per run (initialize,
// Mcp-Session-Id, notifications/initialized; DELETE at the end) and its
// --conns workers share it, so there is one handshake whatever --conns is.
//
// The server is correct in all of these; every response stream starts with
// the priming event of MCP 2025-11-25 (basic/transports, Streamable HTTP,
// "Sending Messages to the Server" item 6: "The server SHOULD immediately
// send an SSE event consisting of an event ID and an empty data field"),
// which carries no JSON-RPC message and must not be judged as one. The
// slow-tool case keeps four calls in flight in the one session: their ids
// must be distinct there (MCP: an id MUST NOT equal that of any request the
// sender still waits on), since the server routes each response to the POST
// stream of the request with that id. (When every worker counted its ids
// from 1, three of the four workers lost a response at once and timed out.)
func TestEverythingHTTP(t *testing.T) {
	e := findEverything(t)
	url := e.startHTTP(t)
	mcp := func(extra ...string) []string { return append([]string{url, "--profile", "mcp"}, extra...) }
	t.Run("wire", func(t *testing.T) { checkEverythingHTTPWire(t, url) })
	cases := []profileCase{
		{
			loadCase: loadCase{name: "echo", args: mcp("--tool", "echo", "--args", echoArgs,
				"--concurrency", "4", "--conns", "4", "--duration", "2s")},
		},
		{
			loadCase: loadCase{name: "tools-list", args: mcp("--method", "tools/list",
				"--concurrency", "2", "--conns", "2", "--duration", "1s")},
		},
		{
			// One call in flight: the progress token is the same on every call.
			loadCase: loadCase{name: "progress", args: mcp("--method", "tools/call", "--params", progressParams,
				"--concurrency", "1", "--conns", "1", "--duration", "1s")},
			serverMethods: map[string]int64{"notifications/progress": 0},
			also:          progressSeen,
		},
		{
			loadCase: loadCase{name: "slow-tool", args: mcp("--tool", "trigger-long-running-operation", "--args", slowArgs,
				"--concurrency", "4", "--conns", "4", "--duration", "1s")},
		},
	}
	for _, c := range cases {
		c.profile, c.era, c.version = "mcp", "legacy", "2025-11-25"
		c.minHandshakes = 1 // the run's one session
		t.Run(c.name, func(t *testing.T) {
			// One after another: the server is one Node.js process.
			c.run(t)
		})
	}
}

// checkEverythingHTTPWire checks, without rpcload, what the comment at the
// top of this file records about the HTTP transport and what the cases
// above rely on: the answer to a modern-era POST (a 400 that means legacy),
// the session id from initialize, and the SSE response that starts with a
// priming event (an id and empty data) before the response event.
func checkEverythingHTTPWire(t *testing.T, url string) {
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(body string, header ...string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", body, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("POST %s: reading the body: %v", body, err)
		}
		return resp, b
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"interop","version":"1"}}`

	resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover")
	var e struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e); resp.StatusCode != http.StatusBadRequest || e.Error.Code != -32000 {
		t.Errorf("modern server/discover: HTTP %d %s %s; want 400 with error -32000 (not initialized)",
			resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}

	resp, body = post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") || session == "" {
		t.Fatalf("initialize: HTTP %d, Content-Type %q, Mcp-Session-Id %q; want 200, text/event-stream and a session id\n%s",
			resp.StatusCode, ct, session, body)
	}
	events := strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n\n")
	if len(events) < 2 || !strings.HasPrefix(events[0], "id: ") || !strings.HasSuffix(events[0], "\ndata: ") {
		t.Errorf("initialize: the SSE stream does not start with a priming event (an id and empty data):\n%q", body)
	}
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	for _, ev := range events {
		for _, line := range strings.Split(ev, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && data != "" {
				json.Unmarshal([]byte(data), &init)
			}
		}
	}
	if init.Result.ProtocolVersion != "2025-11-25" {
		t.Errorf("initialize: protocolVersion %q, want 2025-11-25\n%s", init.Result.ProtocolVersion, body)
	}
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", session)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
	}
	client.CloseIdleConnections()
	t.Logf("modern probe: 400 -32000; initialize: text/event-stream, session %s, priming event %q", session, events[0])
}
