package interop

// MCP interop: rpcload's mcp profile against two real Go MCP server
// libraries, github.com/mark3labs/mcp-go v1.2.1 and the official
// github.com/modelcontextprotocol/go-sdk v1.8.0, over stdio (rpcload starts
// the server as its child) and Streamable HTTP. The servers are the small
// mains in servers/mcpgo and servers/gosdk (tools echo and add), built once
// per test run.
//
// What the two libraries do on the wire (pinned by TestGoMCPServerFacts, so a
// library upgrade that changes it fails there first, with the reason):
//
// Both implement revision 2026-07-28 next to the four legacy ones, so era
// detection decides by what the server answers:
//
//   - stdio, both: server/discover (with the modern _meta) is answered with a
//     DiscoverResult whose supportedVersions is
//     ["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]:
//     auto detects modern (2026-07-28); modern tools/call works without any
//     handshake, and every result carries resultType "complete". After a
//     legacy initialize, both answer server/discover with -32601.
//     initialize {protocolVersion:"2025-11-25"} is answered with 2025-11-25.
//     mcp-go answers out of order (it serves requests concurrently, even
//     tools/call before the initialize reply); the go-sdk answers a request
//     sent before initialize with error code 0 ("method "tools/call" is
//     invalid during session initialization").
//   - HTTP, mcp-go (default NewStreamableHTTPServer): serves both eras on one
//     endpoint, deciding per request. A modern POST (MCP-Protocol-Version
//     header and _meta 2026-07-28) of server/discover or tools/call gets 200
//     application/json; no Mcp-Session-Id. A modern tools/call without
//     Mcp-Name gets 400 -32020. An unknown method gets 404 with a -32601 body.
//     Legacy: initialize gets 200 application/json with an Mcp-Session-Id,
//     notifications/initialized 202, and a later request without (or with an
//     unknown) Mcp-Session-Id gets 404 "Invalid session ID" (text/plain).
//     A legacy unknown method gets 200 with a -32601 response, an unknown
//     notification 202. Every reply is application/json, never
//     text/event-stream.
//   - HTTP, go-sdk default (stateful, SSE): 2026-07-28 is served only by a
//     stateless handler. server/discover is answered 200 text/event-stream
//     with a DiscoverResult whose supportedVersions LEAVES OUT 2026-07-28
//     (["2025-11-25",...]); any other modern request gets 400
//     application/json with -32022 UnsupportedProtocolVersion, data
//     {supported:[legacy versions], requested:"2026-07-28"}. So a client must
//     read supportedVersions (or data.supported): a DiscoverResult alone does
//     not mean modern. Legacy: initialize gets 200 text/event-stream with an
//     Mcp-Session-Id; every request is answered text/event-stream; a request
//     without Mcp-Session-Id gets 200 SSE with error code 0 ("invalid during
//     session initialization"), one with an unknown id 404 "session not found".
//     Unknown method: a modern POST gets 404 with a -32601 body, but a legacy
//     one gets 400 text/plain "JSON RPC not handled: ..." and no JSON-RPC
//     response at all (mcp/streamable.go, the http.Error after checkRequest):
//     the known violation in TestGoMCP's gosdk-http/unknown-method. A legacy
//     notification of an unknown method gets the same 400 text/plain, which
//     Streamable HTTP allows (a server that cannot accept a notification MUST
//     answer with an HTTP error status; the body MAY be an error response).
//   - HTTP, go-sdk with StreamableHTTPOptions.Stateless (servers/gosdk
//     -stateless): discover lists 2026-07-28 and modern requests are answered
//     200 text/event-stream; no Mcp-Session-Id in either era; the legacy
//     unknown method and notification as in stateful mode.
//
// rpcload's side: over stdio each --conns is a child process with its own
// probe and (legacy) initialize; over HTTP one session serves the run.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The MCP server binaries, built once per test run by gomcpServers.
var (
	gomcpBuildOnce sync.Once
	gomcpBuildDir  string
	gomcpBuildErr  error
)

// gomcpServers builds servers/mcpgo and servers/gosdk once and returns the
// directory holding the binaries "mcpgo" and "gosdk". They go next to the
// rpcload binary, in the directory TestMain removes after the run; when
// rpcload did not build (every load test fails then anyway) they go into
// t.TempDir() for this test alone.
func gomcpServers(t *testing.T) string {
	t.Helper()
	if rpcloadPath == "" {
		dir := t.TempDir()
		if err := gomcpBuild(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gomcpBuildOnce.Do(func() {
		gomcpBuildDir = filepath.Join(filepath.Dir(rpcloadPath), "mcp-servers")
		start := time.Now()
		gomcpBuildErr = gomcpBuild(gomcpBuildDir)
		if gomcpBuildErr == nil {
			fmt.Fprintf(os.Stderr, "interop: built the MCP servers in %v\n", time.Since(start).Round(time.Millisecond))
		}
	})
	if gomcpBuildErr != nil {
		t.Fatal(gomcpBuildErr)
	}
	return gomcpBuildDir
}

// gomcpBuild runs `go build -o DIR/ ./servers/mcpgo ./servers/gosdk` in
// this module's directory, without a shell.
func gomcpBuild(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("interop: %w", err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("interop: the go command is not on PATH: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", dir+string(filepath.Separator), "./servers/mcpgo", "./servers/gosdk")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("interop: go build ./servers/...: %w\n%s", err, msg)
	}
	return nil
}

// gomcpStartHTTP starts the server binary bin with -http 127.0.0.1:0 and the
// extra flags, reads the URL it prints, and stops it in t's cleanup (stdin
// closed: it shuts down by itself; killed if it has not after 5 s).
func gomcpStartHTTP(t *testing.T, bin string, extra ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-http", "127.0.0.1:0"}, extra...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr gomcpBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s exited with %v\nstderr:\n%s", filepath.Base(bin), err, stderr.String())
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Errorf("%s did not stop within 5 s of its stdin closing; killed\nstderr:\n%s", filepath.Base(bin), stderr.String())
			<-exited
		}
	})
	select {
	case url, ok := <-lines:
		if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("%s -http: no URL on stdout (got %q)\nstderr:\n%s", filepath.Base(bin), url, stderr.String())
		}
		return url
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s -http: no URL within 10 s", filepath.Base(bin))
	}
	return ""
}

// gomcpBuffer is a bytes.Buffer safe for a child's stderr copier and the
// test reading it.
type gomcpBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *gomcpBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *gomcpBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gomcpCase is one rpcload run with --profile mcp against an MCP server.
type gomcpCase struct {
	name    string
	target  string   // an http:// URL, or "" for a child process
	child   []string // the server command line when target is ""
	args    []string // after the target: method or tool, load, era
	conns   int      // --conns (the handshakes expected in a legacy era)
	era     string   // the profile.era expected: "modern" or "legacy"
	version string   // the profile.version expected, e.g. "2025-11-25"
	known   []knownViolation
	// errorCode: every request must be answered with this JSON-RPC error
	// code instead of a result.
	errorCode string
	// unanswered: the server answers every request with an HTTP error whose
	// body is no JSON-RPC response, so each request is a transport error
	// (HTTP 400 and the body's start in the samples) instead of being
	// answered. It breaks no rule of rpcload's: no JSON-RPC reply came.
	unanswered bool
}

// check runs c and asserts what loadCase.check does (schema, answered > 0,
// every request answered ok or with c.errorCode, no timeouts, leaks,
// transport errors, late, invalid or dropped requests, exactly the known
// violations, the exit code) and the profile section: name mcp, the era
// and revision expected, and the handshakes a legacy era needs.
func (c gomcpCase) check(t *testing.T) {
	t.Helper()
	args := append([]string{"--profile", "mcp", "--conns", fmt.Sprint(c.conns)}, c.args...)
	var (
		r      *result
		code   int
		report string
	)
	if c.target != "" {
		r, code, report = runLoad(t, append([]string{c.target}, args...))
	} else {
		r, code, report = runLoadCmd(t, args, c.child)
	}
	defer func() {
		if t.Failed() {
			t.Logf("rpcload's report:\n%s", report)
		}
	}()
	q := r.Requests
	if r.Schema != "rpcload.result/v1" {
		t.Errorf("schema = %q, want rpcload.result/v1", r.Schema)
	}
	switch {
	case c.unanswered:
		if q.Sent <= 0 || q.TransportErrors != q.Sent || q.Answered != 0 || len(r.TransportErrorSamples) == 0 ||
			!strings.Contains(r.TransportErrorSamples[0], "HTTP 400 with no JSON-RPC response") {
			t.Errorf("sent %d, answered %d, transport errors %d %q: want every request sent to be a transport error (HTTP 400, no JSON-RPC response)",
				q.Sent, q.Answered, q.TransportErrors, r.TransportErrorSamples)
		}
		q.TransportErrors = 0 // expected: not counted again below
	case q.Answered <= 0:
		t.Errorf("answered = %d, want > 0", q.Answered)
	}
	switch {
	case c.unanswered:
	case c.errorCode != "":
		if n := r.ErrorCodes[c.errorCode]; q.RPCErrors != q.Sent || q.Answered != q.Sent || n != q.Sent {
			t.Errorf("sent %d, answered %d, rpc errors %d, codes %v: want every request answered with error %s",
				q.Sent, q.Answered, q.RPCErrors, r.ErrorCodes, c.errorCode)
		}
	case q.OK != q.Sent || q.Answered != q.Sent:
		t.Errorf("sent %d, answered %d, ok %d: want every request answered ok (error codes %v)",
			q.Sent, q.Answered, q.OK, r.ErrorCodes)
	}
	if q.Timeouts+q.Leaked+q.TransportErrors+q.Late+q.InvalidReplies+q.Dropped != 0 {
		t.Errorf("timeouts %d, leaked %d, transport errors %d %q, late %d, invalid %d, dropped %d: want 0",
			q.Timeouts, q.Leaked, q.TransportErrors, r.TransportErrorSamples, q.Late, q.InvalidReplies, q.Dropped)
	}
	loadCase{known: c.known}.checkViolations(t, r)
	want := 0
	if len(c.known) > 0 || c.unanswered { // transport errors fail a run too
		want = 1
	}
	if code != want {
		t.Errorf("exit code %d, want %d", code, want)
	}
	if c.target == "" {
		// The servers stop by themselves when rpcload closes their stdin.
		if r.Child == nil || len(r.Child.Exits) != c.conns {
			t.Errorf("child section %+v: want %d exits", r.Child, c.conns)
		} else {
			for _, e := range r.Child.Exits {
				if !strings.Contains(e, "exit status 0") {
					t.Errorf("child exit %q, want exit status 0 (stdin closed)", e)
				}
			}
		}
	}
	p := r.Profile
	if p == nil {
		t.Errorf("the result file has no profile section")
		return
	}
	t.Logf("profile: name %s, era %s, version %s, handshakes %d, server requests answered %d, cancels %d; server messages %d %v",
		p.Name, p.Era, p.Version, p.Handshakes, p.ServerRequestsAnswered, p.CancelsSent, q.ServerMessages, r.ServerMethods)
	if p.Name != "mcp" {
		t.Errorf("profile.name = %q, want mcp", p.Name)
	}
	if p.Era != c.era || p.Version != c.version {
		t.Errorf("profile era %q version %q, want %q %q", p.Era, p.Version, c.era, c.version)
	}
	// A legacy era needs an initialize: one per child process on stdio; over
	// HTTP rpcload holds one session for the run (as one client would),
	// shared by its --conns connections.
	minHandshakes := int64(c.conns)
	if c.target != "" {
		minHandshakes = 1
	}
	if c.era == "legacy" && p.Handshakes < minHandshakes {
		t.Errorf("profile.handshakes = %d, want >= %d", p.Handshakes, minHandshakes)
	}
	if p.CancelsSent != 0 {
		t.Errorf("profile.cancels_sent = %d, want 0 (nothing timed out)", p.CancelsSent)
	}
}

// The arguments of the tools and the revisions the servers negotiate.
const (
	gomcpEchoArgs = `{"text":"hi","n":[1,2.5,"x"]}`
	gomcpAddArgs  = `{"a":2,"b":3}`
	gomcpModern   = "2026-07-28"
	gomcpLegacy   = "2025-11-25" // what rpcload asks for in initialize; both libraries accept it
)

// gomcpTarget is one server and transport the load cases run against.
type gomcpTarget struct {
	name    string
	url     string   // Streamable HTTP endpoint, or ""
	child   []string // stdio server command line
	era     string   // what --mcp-era auto should find
	version string
	// short: run only echo and the forced legacy era (a variant of a target
	// already covered in full).
	short bool
}

// TestGoMCP runs rpcload --profile mcp against mcp-go and the go-sdk over
// stdio and Streamable HTTP: tools/call echo and add and tools/list with
// era detection (auto), an unknown method, and tools/call with the legacy
// era forced. The one rule broken is the go-sdk's answer to a legacy
// request for an unknown method over HTTP (no JSON-RPC response), listed as
// a known violation.
func TestGoMCP(t *testing.T) {
	if buildErr != nil {
		t.Fatalf("cannot run rpcload: %v", buildErr)
	}
	start := time.Now() // the parallel subtests end before the cleanups run
	t.Cleanup(func() { t.Logf("wall time with the servers up: %v", time.Since(start).Round(time.Millisecond)) })
	dir := gomcpServers(t)
	mcpgo, gosdk := filepath.Join(dir, "mcpgo"), filepath.Join(dir, "gosdk")
	targets := []gomcpTarget{
		{name: "mcpgo-stdio", child: []string{mcpgo}, era: "modern", version: gomcpModern},
		{name: "mcpgo-http", url: gomcpStartHTTP(t, mcpgo), era: "modern", version: gomcpModern},
		{name: "gosdk-stdio", child: []string{gosdk}, era: "modern", version: gomcpModern},
		// Stateful (the SDK's default): its DiscoverResult leaves out
		// 2026-07-28 and modern requests get 400 -32022, so the only era
		// that works is legacy.
		{name: "gosdk-http", url: gomcpStartHTTP(t, gosdk), era: "legacy", version: gomcpLegacy},
		{name: "gosdk-http-stateless", url: gomcpStartHTTP(t, gosdk, "-stateless"), era: "modern", version: gomcpModern, short: true},
	}
	for _, tg := range targets {
		// load: 8 in flight over conns connections for dur.
		load := func(conns int, dur string, extra ...string) gomcpCase {
			return gomcpCase{target: tg.url, child: tg.child, conns: conns, era: tg.era, version: tg.version,
				args: append([]string{"--concurrency", "8", "--duration", dur}, extra...)}
		}
		var cases []gomcpCase
		add := func(name string, c gomcpCase) {
			c.name = name
			cases = append(cases, c)
		}
		add("echo", load(2, "2s", "--tool", "echo", "--args", gomcpEchoArgs))
		if !tg.short {
			add("add", load(1, "1s", "--tool", "add", "--args", gomcpAddArgs))
			add("tools-list", load(2, "1s", "--method", "tools/list"))
			// Unknown method: -32601 on every transport (over modern HTTP it
			// comes with status 404, which protocols.md §2 prescribes).
			c := load(1, "1s", "--method", "nosuch/method")
			c.errorCode = "-32601"
			if tg.name == "gosdk-http" {
				// A legacy-era request for an unknown method is answered
				// "400 text/plain: JSON RPC not handled: ..." (go-sdk
				// v1.8.0 mcp/streamable.go, the http.Error after
				// checkRequest; only 2026-07-28 requests get the 404
				// with a -32601 body).
				// That breaks JSON-RPC 2.0 section 5 (a call MUST be
				// answered with a Response, here error -32601, section 5.1)
				// and MCP 2025-11-25 Streamable HTTP (a POSTed request MUST
				// be answered with application/json or text/event-stream):
				// rpcload counts every such request as a transport error.
				c.errorCode, c.unanswered = "", true
			}
			add("unknown-method", c)
		}
		c := load(2, "1s", "--tool", "echo", "--args", gomcpEchoArgs, "--mcp-era", "legacy")
		c.era, c.version = "legacy", gomcpLegacy
		add("forced-legacy", c)
		for _, c := range cases {
			t.Run(tg.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				c.check(t)
			})
		}
	}
}

// --- Driving the servers by hand: the facts era detection depends on ---

// gomcpMeta is the params._meta of a modern request.
const gomcpMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"interop-test","version":"0"}}`

// gomcpReply is a JSON-RPC response as the fact tests read it.
type gomcpReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// gomcpStdio drives a stdio MCP server by hand.
type gomcpStdio struct {
	t     *testing.T
	stdin io.WriteCloser
	lines chan []byte
}

// gomcpStartStdio starts bin (stdio mode) and stops it in t's cleanup by
// closing its stdin; it must exit by itself within 5 s.
func gomcpStartStdio(t *testing.T, bin string) *gomcpStdio {
	t.Helper()
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr gomcpBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &gomcpStdio{t: t, stdin: stdin, lines: make(chan []byte, 16)}
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s exited with %v\nstderr:\n%s", filepath.Base(bin), err, stderr.String())
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Errorf("%s did not exit within 5 s of its stdin closing; killed", filepath.Base(bin))
			<-exited
		}
	})
	return p
}

// send writes one line.
func (p *gomcpStdio) send(msg string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, msg+"\n"); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// call sends a request with id and returns the response carrying that id,
// skipping anything else the server writes (notifications, requests).
func (p *gomcpStdio) call(id int, method, params string) gomcpReply {
	p.t.Helper()
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, id, method)
	if params != "" {
		msg += `,"params":` + params
	}
	p.send(msg + "}")
	deadline := time.After(5 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("%s: the server closed stdout", method)
			}
			var r gomcpReply
			if err := json.Unmarshal(line, &r); err != nil {
				p.t.Fatalf("%s: not JSON on stdout: %q", method, line)
			}
			if string(r.ID) == fmt.Sprint(id) {
				return r
			}
		case <-deadline:
			p.t.Fatalf("%s: no reply within 5 s", method)
		}
	}
}

// gomcpExchange is what a POST to a Streamable HTTP endpoint returned.
type gomcpExchange struct {
	status      int
	contentType string // media type only
	sessionID   string
	reply       gomcpReply // the JSON-RPC response in the body (the SSE event carrying it)
	body        string
}

// gomcpPost POSTs body to url with Accept: application/json,
// text/event-stream and the headers given as name, value pairs.
func gomcpPost(t *testing.T, url, body string, headers ...string) gomcpExchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the body: %v", body, err)
	}
	x := gomcpExchange{status: resp.StatusCode, sessionID: resp.Header.Get("Mcp-Session-Id"), body: string(raw)}
	x.contentType, _, _ = strings.Cut(resp.Header.Get("Content-Type"), ";")
	payload := raw
	if x.contentType == "text/event-stream" {
		payload = nil
		for line := range strings.SplitSeq(string(raw), "\n") {
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:"); ok {
				payload = []byte(strings.TrimSpace(data)) // the last event: the response
			}
		}
	}
	if x.contentType == "application/json" || x.contentType == "text/event-stream" {
		if err := json.Unmarshal(payload, &x.reply); err != nil {
			t.Fatalf("POST %s: %d %s body %q: %v", body, x.status, x.contentType, raw, err)
		}
	}
	return x
}

// gomcpModernHeaders are the headers of a modern POST of method (name: Mcp-Name).
func gomcpModernHeaders(method, name string) []string {
	h := []string{"MCP-Protocol-Version", gomcpModern, "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return h
}

// gomcpDiscoverVersions returns DiscoverResult.supportedVersions.
func gomcpDiscoverVersions(t *testing.T, r gomcpReply) []string {
	t.Helper()
	if r.Error != nil || r.Result == nil {
		t.Fatalf("server/discover: want a result, got error %+v", r.Error)
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
		ResultType        string   `json:"resultType"`
	}
	if err := json.Unmarshal(r.Result, &d); err != nil {
		t.Fatalf("server/discover result %s: %v", r.Result, err)
	}
	if d.ResultType != "complete" {
		t.Errorf("server/discover resultType %q, want complete", d.ResultType)
	}
	return d.SupportedVersions
}

// gomcpToolText returns the text of a tools/call result's single text content.
func gomcpToolText(t *testing.T, what string, r gomcpReply) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("%s: error %d %s", what, r.Error.Code, r.Error.Message)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" || res.IsError {
		t.Fatalf("%s: result %s: want one text content (err %v)", what, r.Result, err)
	}
	return res.Content[0].Text
}

// TestGoMCPServerFacts drives the two servers without rpcload and pins what
// they answer to the requests era detection depends on (see the comment at
// the top of this file): it tells whether the servers themselves work and,
// when a library upgrade changes its behaviour, why TestGoMCP's expected
// eras no longer hold.
func TestGoMCPServerFacts(t *testing.T) {
	dir := gomcpServers(t)
	allVersions := []string{gomcpModern, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	legacyVersions := allVersions[1:]
	const initParams = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop-test","version":"0"}}`

	for _, name := range []string{"mcpgo", "gosdk"} {
		bin := filepath.Join(dir, name)
		t.Run(name+"-stdio", func(t *testing.T) {
			t.Parallel()
			// Modern: server/discover, then tools/call with no handshake.
			p := gomcpStartStdio(t, bin)
			if v := gomcpDiscoverVersions(t, p.call(1, "server/discover", "{"+gomcpMeta+"}")); !slices.Equal(v, allVersions) {
				t.Errorf("stdio server/discover supportedVersions %q, want %q", v, allVersions)
			}
			r := p.call(2, "tools/call", `{"name":"add","arguments":{"a":2,"b":3},`+gomcpMeta+`}`)
			if got := gomcpToolText(t, "modern add", r); got != "5" {
				t.Errorf("modern add 2+3 = %q, want 5", got)
			}
			if !bytes.Contains(r.Result, []byte(`"resultType":"complete"`)) {
				t.Errorf("modern tools/call result %s has no resultType complete", r.Result)
			}
			// Legacy, on a fresh process: initialize, initialized, echo.
			p = gomcpStartStdio(t, bin)
			r = p.call(1, "initialize", initParams)
			var init struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if r.Error != nil || json.Unmarshal(r.Result, &init) != nil || init.ProtocolVersion != gomcpLegacy {
				t.Fatalf("initialize: result %s error %+v, want protocolVersion %s", r.Result, r.Error, gomcpLegacy)
			}
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if got := gomcpToolText(t, "legacy echo", p.call(2, "tools/call", `{"name":"echo","arguments":`+gomcpEchoArgs+`}`)); got != gomcpEchoArgs {
				t.Errorf("legacy echo = %q, want %q", got, gomcpEchoArgs)
			}
			if r := p.call(3, "server/discover", ""); r.Error == nil || r.Error.Code != -32601 {
				t.Errorf("server/discover after a legacy initialize: %s %+v, want error -32601", r.Result, r.Error)
			}
		})
	}

	type httpFacts struct {
		name, bin   string
		flags       []string
		contentType string   // of every reply with a body
		discover    []string // supportedVersions over this transport
		modernOK    bool     // a modern tools/call works (else 400 -32022)
		session     bool     // initialize hands out an Mcp-Session-Id
		noSession   int      // status of a legacy request without Mcp-Session-Id
		// legacyUnknown is the status of a legacy request for an unknown
		// method: 200 with a -32601 response, or 400 text/plain (no
		// JSON-RPC response at all).
		legacyUnknown int
		// unknownNote is the status of a legacy notification of an
		// unknown method: 202, or 400 text/plain (legal: a server that
		// cannot accept a notification MUST answer an HTTP error status).
		unknownNote int
	}
	for _, f := range []httpFacts{
		{name: "mcpgo-http", bin: "mcpgo", contentType: "application/json", discover: allVersions, modernOK: true,
			session: true, noSession: http.StatusNotFound, legacyUnknown: http.StatusOK, unknownNote: http.StatusAccepted},
		{name: "gosdk-http", bin: "gosdk", contentType: "text/event-stream", discover: legacyVersions, modernOK: false,
			session: true, noSession: http.StatusOK, legacyUnknown: http.StatusBadRequest, unknownNote: http.StatusBadRequest},
		{name: "gosdk-http-stateless", bin: "gosdk", flags: []string{"-stateless"}, contentType: "text/event-stream",
			discover: allVersions, modernOK: true, session: false, noSession: http.StatusOK,
			legacyUnknown: http.StatusBadRequest, unknownNote: http.StatusBadRequest},
	} {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			url := gomcpStartHTTP(t, filepath.Join(dir, f.bin), f.flags...)
			x := gomcpPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+gomcpMeta+`}}`,
				gomcpModernHeaders("server/discover", "")...)
			if x.status != http.StatusOK || x.contentType != f.contentType || x.sessionID != "" {
				t.Errorf("modern server/discover: %d %s session %q, want 200 %s and no session", x.status, x.contentType, x.sessionID, f.contentType)
			}
			if v := gomcpDiscoverVersions(t, x.reply); !slices.Equal(v, f.discover) {
				t.Errorf("server/discover supportedVersions %q, want %q", v, f.discover)
			}
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},`+gomcpMeta+`}}`,
				gomcpModernHeaders("tools/call", "add")...)
			if f.modernOK {
				if x.status != http.StatusOK || x.contentType != f.contentType {
					t.Errorf("modern tools/call: %d %s, want 200 %s", x.status, x.contentType, f.contentType)
				}
				if got := gomcpToolText(t, "modern add", x.reply); got != "5" {
					t.Errorf("modern add = %q, want 5", got)
				}
			} else if x.status != http.StatusBadRequest || x.contentType != "application/json" ||
				x.reply.Error == nil || x.reply.Error.Code != -32022 {
				t.Errorf("modern tools/call on a stateful server: %d %s %s, want 400 application/json with error -32022", x.status, x.contentType, x.body)
			}
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"nosuch/method","params":{`+gomcpMeta+`}}`,
				gomcpModernHeaders("nosuch/method", "")...)
			if x.status != http.StatusNotFound || x.reply.Error == nil || x.reply.Error.Code != -32601 {
				t.Errorf("modern unknown method: %d %s, want 404 with error -32601", x.status, x.body)
			}

			// Legacy: initialize, initialized, echo with the session.
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+initParams+`}`)
			if x.status != http.StatusOK || x.contentType != f.contentType || (x.sessionID != "") != f.session {
				t.Errorf("initialize: %d %s session %q, want 200 %s, session %v", x.status, x.contentType, x.sessionID, f.contentType, f.session)
			}
			sid := x.sessionID
			var hdr []string
			if sid != "" {
				hdr = []string{"Mcp-Session-Id", sid}
			}
			hdr = append(hdr, "MCP-Protocol-Version", gomcpLegacy)
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
			if x.status != http.StatusAccepted || x.body != "" {
				t.Errorf("notifications/initialized: %d %q, want 202 and no body", x.status, x.body)
			}
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":`+gomcpEchoArgs+`}}`, hdr...)
			if x.status != http.StatusOK || x.contentType != f.contentType {
				t.Errorf("legacy tools/call: %d %s, want 200 %s", x.status, x.contentType, f.contentType)
			}
			if got := gomcpToolText(t, "legacy echo", x.reply); got != gomcpEchoArgs {
				t.Errorf("legacy echo = %q, want %q", got, gomcpEchoArgs)
			}
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
				"MCP-Protocol-Version", gomcpLegacy)
			if x.status != f.noSession {
				t.Errorf("legacy tools/call without Mcp-Session-Id: %d %q, want status %d", x.status, x.body, f.noSession)
			}
			t.Logf("legacy tools/call without Mcp-Session-Id: %d %s %s", x.status, x.contentType, strings.TrimSpace(x.body))
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","id":4,"method":"nosuch/method"}`, hdr...)
			t.Logf("legacy unknown method: %d %s %s", x.status, x.contentType, strings.TrimSpace(x.body))
			switch {
			case x.status != f.legacyUnknown:
				t.Errorf("legacy unknown method: %d %q, want status %d", x.status, x.body, f.legacyUnknown)
			case x.status == http.StatusOK && (x.reply.Error == nil || x.reply.Error.Code != -32601):
				t.Errorf("legacy unknown method: %s, want error -32601", x.body)
			case x.status != http.StatusOK && x.contentType != "text/plain":
				t.Errorf("legacy unknown method: %d %s %q, want text/plain", x.status, x.contentType, x.body)
			}
			x = gomcpPost(t, url, `{"jsonrpc":"2.0","method":"notifications/nosuch"}`, hdr...)
			t.Logf("legacy unknown notification: %d %s %s", x.status, x.contentType, strings.TrimSpace(x.body))
			if x.status != f.unknownNote {
				t.Errorf("legacy unknown notification: %d %q, want status %d", x.status, x.body, f.unknownNote)
			}
		})
	}
}
