package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while serveWith writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeFlagValidation: listener and --stdio flags that cannot work
// together are usage errors naming the flags, before anything listens.
func TestServeFlagValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"bad framing", []string{"--stdio", "--framing", "xml"}, []string{"--framing", "xml", "newline or content-length"}},
		{"bad framing, no stdio", []string{"--framing", "xml"}, []string{"--framing", "xml"}},
		{"framing without stdio", []string{"--framing", "content-length", "--tcp", "127.0.0.1:0"}, []string{"--framing applies to --stdio only", "--tcp-lsp"}},
		{"stdio with http", []string{"--stdio", "--http", "127.0.0.1:0"}, []string{"--stdio", "--http"}},
		{"stdio with all listeners", []string{"--stdio", "--tcp", ":0", "--tcp-lsp", ":0", "--unix", "a", "--unix-lsp", "b"}, []string{"--tcp, --tcp-lsp, --unix, --unix-lsp"}},
		{"unix path in a missing dir", []string{"--unix", filepath.Join(t.TempDir(), "no", "such", "s.sock")}, []string{"listen unix"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code, err := serveWith(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage || err == nil {
				t.Fatalf("serveWith(%q) = %d, %v; want exit 2 and an error", tc.args, code, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if stdout.String() != "" {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

// TestServeStdio: --stdio answers on stdout and writes nothing else there,
// exits 0 at EOF after pending replies, and reports on stderr.
func TestServeStdio(t *testing.T) {
	const (
		slow = `{"jsonrpc":"2.0","id":1,"method":"sleep","params":[20]}`
		add  = `{"jsonrpc":"2.0","id":2,"method":"add","params":[1,2]}`
		note = `{"jsonrpc":"2.0","method":"get_time"}`
	)
	ok1, ok2 := `{"jsonrpc":"2.0","id":1,"result":true}`, `{"jsonrpc":"2.0","id":2,"result":3}`
	cl := func(s string) string { return "Content-Length: " + strconv.Itoa(len(s)) + "\r\n\r\n" + s }
	for _, tc := range []struct {
		name   string
		args   []string
		in     string
		want   string   // stdout, exactly
		stderr []string // among what stderr says
	}{
		{"newline", []string{"--stdio"}, slow + "\n" + note + "\n" + add + "\n", ok2 + "\n" + ok1 + "\n",
			[]string{"newline framing", "stopped after 3 frames"}},
		{"content-length", []string{"--stdio", "--framing", "content-length"}, cl(slow) + cl(note) + cl(add), cl(ok2) + cl(ok1),
			[]string{"content-length framing", "stopped after 3 frames"}},
		{"lsp alias, faults", []string{"--stdio", "--framing=lsp", "--fault", "duplicate=1"}, cl(add), cl(ok2) + cl(ok2),
			[]string{"stopped after 1 frames", "duplicate:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code, stderr := runServeStdio(t, tc.args, tc.in)
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
			}
			if string(got) != tc.want {
				t.Errorf("stdout %q\nwant   %q", got, tc.want)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q lacks %q", stderr.String(), w)
				}
			}
		})
	}
}

// runServeStdio runs `rpcload serve ARGS` in-process with in as its stdin and
// returns its stdout (read until the server closed it), its exit code and
// its stderr. An error from serve fails the test.
func runServeStdio(t *testing.T, args []string, in string) ([]byte, int, *lockedBuffer) {
	t.Helper()
	outR, outW := io.Pipe()
	stderr := &lockedBuffer{}
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := serveWith(context.Background(), args, strings.NewReader(in), outW, stderr)
		done <- result{code, err}
	}()
	got, err := io.ReadAll(outR) // EOF: the server closed stdout
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("serve %q: %v; stderr:\n%s", args, r.err, stderr.String())
	}
	return got, r.code, stderr
}

// TestServeStdioInterrupted: cancelling the context ends --stdio at once,
// with exit 0, even while a reply is pending.
func TestServeStdioInterrupted(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		code, err := serveWith(ctx, []string{"--stdio"}, inR, outW, &stderr)
		if code != exitOK && err == nil {
			err = errors.New("exit " + strconv.Itoa(code))
		}
		done <- err
	}()
	go func() { _, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"sleep","params":[600000]}`+"\n") }()
	r := bufio.NewReader(outR)
	cancel()
	if _, err := r.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("stdout: %v, want EOF", err)
	}
	if err := <-done; err != nil {
		t.Errorf("serveWith: %v", err)
	}
}

// TestServeListeners: every listener flag at once; the printed URLs work,
// ws:// among them, and socket files are gone after the stop.
func TestServeListeners(t *testing.T) {
	dir := t.TempDir()
	nd, lsp := filepath.Join(dir, "nd.sock"), filepath.Join(dir, "lsp.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		code, _ := serveWith(ctx, []string{"--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--tcp-lsp", "127.0.0.1:0",
			"--unix", nd, "--unix-lsp", lsp}, strings.NewReader(""), outW, &stderr)
		done <- code
		_ = outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	urls := map[string]string{}
	for len(urls) < 6 && sc.Scan() {
		line := sc.Text()
		i := strings.LastIndex(line, " on ")
		scheme, _, _ := strings.Cut(line[i+4:], "://")
		urls[scheme] = line[i+4:]
	}
	want := map[string]string{"unix": "unix://" + nd, "unix+lsp": "unix+lsp://" + lsp}
	for scheme, u := range want {
		if urls[scheme] != u {
			t.Errorf("%s URL %q, want %q", scheme, urls[scheme], u)
		}
	}
	for _, scheme := range []string{"http", "ws", "tcp", "tcp+lsp"} {
		if !strings.HasPrefix(urls[scheme], scheme+"://127.0.0.1:") {
			t.Errorf("%s URL %q", scheme, urls[scheme])
		}
	}
	if !strings.HasSuffix(urls["ws"], "/ws") || strings.TrimSuffix(urls["ws"], "/ws")[len("ws://"):] != strings.TrimSuffix(urls["http"], "/")[len("http://"):] {
		t.Errorf("ws URL %q does not match http URL %q", urls["ws"], urls["http"])
	}
	// One request over the Content-Length Unix socket.
	nc, err := net.Dial("unix", lsp)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	req := `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`
	_, _ = io.WriteString(nc, "Content-Length: "+strconv.Itoa(len(req))+"\r\n\r\n"+req)
	_ = nc.(*net.UnixConn).CloseWrite()
	got, _ := io.ReadAll(nc)
	_ = nc.Close()
	if reply := `{"jsonrpc":"2.0","id":1,"result":"0x539"}`; string(got) != "Content-Length: "+strconv.Itoa(len(reply))+"\r\n\r\n"+reply {
		t.Errorf("unix+lsp reply %q", got)
	}
	cancel()
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
	if !slices.ContainsFunc(rest, func(l string) bool { return strings.HasPrefix(l, "stopped after 1 frames") }) {
		t.Errorf("final lines %q", rest)
	}
	for _, p := range []string{nd, lsp} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after stop: %v", p, err)
		}
	}
}

// TestServeStdioBinary: the real process with --stdio writes replies and
// nothing else on stdout, and exits 0 when stdin ends.
func TestServeStdioBinary(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio", "--framing", "content-length")
	cmd.WaitDelay = time.Second
	req := `{"jsonrpc":"2.0","id":"a","method":"echo","params":[1]}`
	cmd.Stdin = strings.NewReader("Content-Length: " + strconv.Itoa(len(req)) + "\r\n\r\n" + req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("serve --stdio: %v\nstderr:\n%s", err, &stderr)
	}
	reply := `{"jsonrpc":"2.0","id":"a","result":[1]}`
	if want := "Content-Length: " + strconv.Itoa(len(reply)) + "\r\n\r\n" + reply; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "stopped after 1 frames") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestServeProfileFlags: --profile and the MCP flags refuse combinations
// that cannot mean anything, naming the flags, before anything listens.
func TestServeProfileFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"bad profile", []string{"--profile", "xml"}, []string{"--profile", "xml", "jsonrpc, mcp or lsp"}},
		{"bad era", []string{"--profile", "mcp", "--mcp-era", "old"}, []string{"--mcp-era", "old"}},
		{"bad response mode", []string{"--profile", "mcp", "--http", "127.0.0.1:0", "--mcp-response", "xml"}, []string{"--mcp-response", "xml"}},
		{"era without mcp", []string{"--mcp-era", "modern"}, []string{"--mcp-era applies to --profile mcp only"}},
		{"server messages with lsp", []string{"--profile", "lsp", "--server-messages"}, []string{"--server-messages applies to --profile mcp only", "lsp"}},
		{"response mode without http", []string{"--profile", "mcp", "--tcp", "127.0.0.1:0", "--mcp-response", "sse"}, []string{"--mcp-response", "--http"}},
		{"lsp over http", []string{"--profile", "lsp", "--http", "127.0.0.1:0"}, []string{"no HTTP transport", "--tcp-lsp"}},
		{"faults with mcp", []string{"--profile", "mcp", "--fault", "drop"}, []string{"--fault", "jsonrpc only"}},
		{"lsp stdio with listener", []string{"--profile", "lsp", "--stdio", "--tcp-lsp", "127.0.0.1:0"}, []string{"--stdio", "--tcp-lsp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code, err := serveWith(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage || err == nil {
				t.Fatalf("serveWith(%q) = %d, %v; want exit 2 and an error", tc.args, code, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestServeStdioProfiles: --profile lsp on stdio is Content-Length framed
// without --framing and exits 0 after shutdown and exit, 1 after exit
// alone; --profile mcp on stdio speaks newline-delimited MCP.
func TestServeStdioProfiles(t *testing.T) {
	cl := func(s string) string { return "Content-Length: " + strconv.Itoa(len(s)) + "\r\n\r\n" + s }
	initialize := cl(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`) +
		cl(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	shutdown := cl(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	exit := cl(`{"jsonrpc":"2.0","method":"exit"}`)
	discover := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
	for _, tc := range []struct {
		name   string
		args   []string
		in     string
		code   int
		stdout []string // in this order
		stderr []string
	}{
		{"lsp clean exit", []string{"--profile", "lsp", "--stdio"}, initialize + shutdown + exit + cl(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`), exitOK,
			[]string{`"hoverProvider":true`, `"method":"window/logMessage"`, cl(`{"jsonrpc":"2.0","id":2,"result":null}`)},
			[]string{"serving LSP on stdin and stdout (content-length framing)", "LSP: requests map[initialize:1 shutdown:1]"}},
		{"lsp exit without shutdown", []string{"--profile", "lsp", "--stdio"}, initialize + exit, exitFindings,
			[]string{`"hoverProvider":true`}, []string{"exit came without shutdown"}},
		{"mcp", []string{"--profile", "mcp", "--stdio", "--mcp-era", "modern"}, discover, exitOK,
			[]string{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]`},
			[]string{"serving MCP on stdin and stdout (newline framing)", "MCP: requests map[server/discover:1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code, stderr := runServeStdio(t, tc.args, tc.in)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			rest := string(got)
			for _, w := range tc.stdout {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stdout %q lacks %q (in order)", got, w)
				}
				rest = rest[i+len(w):]
			}
			if tc.code == exitOK && strings.Contains(rest, `"id":3`) {
				t.Errorf("a request after exit was answered: %q", got)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q lacks %q", stderr.String(), w)
				}
			}
		})
	}
}

// TestServeMCPListeners: --profile mcp prints the Streamable HTTP URL,
// which answers, next to the stream listeners, and reports MCP counters.
func TestServeMCPListeners(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		code, _ := serveWith(ctx, []string{"--profile", "mcp", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--mcp-response", "json"}, strings.NewReader(""), outW, &stderr)
		done <- code
		_ = outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	var mcpURL string
	var lines []string
	for len(lines) < 4 && sc.Scan() {
		lines = append(lines, sc.Text())
		if u, ok := strings.CutPrefix(sc.Text(), "serving MCP over Streamable HTTP on "); ok {
			mcpURL = u
		}
	}
	if !strings.HasSuffix(mcpURL, "/mcp") || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "serving MCP over TCP on tcp://127.0.0.1:") }) {
		t.Fatalf("lines %q", lines)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(got), `"supportedVersions":["2026-07-28"]`) {
		t.Errorf("%d %s", resp.StatusCode, got)
	}
	cancel()
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
	if !slices.ContainsFunc(rest, func(l string) bool { return strings.HasPrefix(l, "MCP: requests map[server/discover:1]") }) {
		t.Errorf("final lines %q", rest)
	}
}

// TestServePlantedBugsFlags: --planted-bugs refuses unknown names and the
// flags of transports and modes it does not serve, naming them.
func TestServePlantedBugsFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown bug", []string{"--planted-bugs", "deep_nesting,nope"}, []string{"--planted-bugs", `"nope"`, "huge_id"}},
		{"unix socket", []string{"--planted-bugs", "all", "--unix", "x.sock"}, []string{"--unix", "--planted-bugs"}},
		{"faults", []string{"--planted-bugs", "all", "--stdio", "--fault", "drop"}, []string{"--fault", "--planted-bugs"}},
		{"profile", []string{"--planted-bugs", "hang", "--profile", "mcp", "--tcp", "127.0.0.1:0"}, []string{"--profile", "--planted-bugs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code, err := serveWith(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage || err == nil {
				t.Fatalf("serveWith(%q) = %d, %v; want exit 2 and an error", tc.args, code, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestServePlantedBugsStdio: in-process, a planted hang stops the answers
// (and EOF still ends the server with 0); without bugs the same input is
// answered in full, also with Content-Length framing.
func TestServePlantedBugsStdio(t *testing.T) {
	echo := `{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`
	hang := `{"jsonrpc":"2.0","id":-0,"method":""}`
	cl := func(s string) string { return "Content-Length: " + strconv.Itoa(len(s)) + "\r\n\r\n" + s }
	for _, tc := range []struct {
		name      string
		args      []string
		in, want  string
		stderrHas string
	}{
		{"hang", []string{"--stdio", "--planted-bugs", "hang"}, echo + "\n" + hang + "\n" + echo + "\n",
			`{"jsonrpc":"2.0","id":1,"result":[1]}` + "\n", "planted bugs hang on stdin"},
		{"none planted", []string{"--stdio", "--planted-bugs="}, echo + "\n" + hang + "\n",
			`{"jsonrpc":"2.0","id":1,"result":[1]}` + "\n" + `{"jsonrpc":"2.0","id":-0,"error":{"code":-32601,"message":"Method not found","data":""}}` + "\n",
			"stopped after 2 frames"},
		{"content-length", []string{"--stdio", "--planted-bugs", "all", "--framing", "content-length"}, cl(echo),
			cl(`{"jsonrpc":"2.0","id":1,"result":[1]}`), "(content-length framing)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code, stderr := runServeStdio(t, tc.args, tc.in)
			if code != exitOK || string(got) != tc.want {
				t.Errorf("exit %d, stdout %q; want 0, %q", code, got, tc.want)
			}
			if !strings.Contains(stderr.String(), tc.stderrHas) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.stderrHas)
			}
		})
	}
}

// TestServePlantedBugsStdioBinary: the real process answers until a planted
// crash, then exits with status 2 and the panic message on stderr.
func TestServePlantedBugsStdioBinary(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio", "--planted-bugs", "deep_nesting")
	cmd.WaitDelay = time.Second
	echo := `{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`
	deep := `{"jsonrpc":"2.0","id":2,"method":"echo","params":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	cmd.Stdin = strings.NewReader(echo + "\n" + deep + "\n" + echo + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("serve --stdio --planted-bugs: %v, want exit status 2\nstderr:\n%s", err, &stderr)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":[1]}` + "\n"; stdout.String() != want {
		t.Errorf("stdout %q, want only %q", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "panic: fuzztarget: planted bug deep_nesting\n") {
		t.Errorf("stderr %q lacks the panic message", stderr.String())
	}
}

// TestServePlantedBugsListeners: --http and --tcp answer with the planted
// server; a crash drops the connection and is logged on stderr; cancelling
// stops the server with exit 0.
func TestServePlantedBugsListeners(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		code, _ := serveWith(ctx, []string{"--planted-bugs", "huge_id", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"}, strings.NewReader(""), outW, &stderr)
		done <- code
		_ = outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	urls := map[string]string{}
	for len(urls) < 2 && sc.Scan() {
		line := sc.Text()
		u := line[strings.LastIndex(line, " on ")+4:]
		scheme, _, _ := strings.Cut(u, "://")
		urls[scheme] = u
	}
	echo := `{"jsonrpc":"2.0","id":1,"method":"echo"}`
	huge := `{"jsonrpc":"2.0","id":18446744073709551616,"method":"echo"}`
	resp, err := http.Post(urls["http"], "application/json", strings.NewReader(echo))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(got) != `{"jsonrpc":"2.0","id":1,"result":null}` {
		t.Errorf("HTTP reply %d %q", resp.StatusCode, got)
	}
	if resp, err := http.Post(urls["http"], "application/json", strings.NewReader(huge)); err == nil {
		_ = resp.Body.Close()
		t.Errorf("HTTP answered a planted crash: %d", resp.StatusCode)
	}
	nc, err := net.Dial("tcp", strings.TrimPrefix(urls["tcp"], "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(nc)
	_, _ = io.WriteString(nc, echo+"\n")
	if line, err := r.ReadString('\n'); line != `{"jsonrpc":"2.0","id":1,"result":null}`+"\n" {
		t.Errorf("TCP reply %q, %v", line, err)
	}
	_, _ = io.WriteString(nc, huge+"\n"+echo+"\n")
	if tcpOut, err := io.ReadAll(r); err == nil || len(tcpOut) > 0 {
		t.Errorf("TCP after a crash: %q, %v; want a reset", tcpOut, err)
	}
	cancel()
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
	if len(rest) != 1 || rest[0] != "stopped after 4 frames" {
		t.Errorf("final lines %q", rest)
	}
	for _, want := range []string{"http: panic serving", "fuzztarget: planted bug huge_id (TCP connection from"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
