package fuzztarget

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// pipeRun serves one stream over io.Pipe: the test writes input and reads
// replies as a client would.
type pipeRun struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startPipe(t *testing.T, ctx context.Context, serve func(context.Context, io.Reader, io.Writer) error) *pipeRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipeRun{in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := serve(ctx, inR, outW)
		_ = outW.Close() // the client reads EOF after the last reply
		p.done <- err
	}()
	t.Cleanup(func() { _ = inR.Close(); _ = outR.Close() })
	return p
}

func (p *pipeRun) send(t *testing.T, s string) {
	t.Helper()
	go func() { _, _ = io.WriteString(p.in, s) }() // a stuck server must not block the test here
}

func (p *pipeRun) line(t *testing.T) string {
	t.Helper()
	l, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a reply: %v (got %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

// TestServeStream: newline-delimited frames are answered in order, with
// blank lines and CRLF tolerated and notifications unanswered; EOF ends the
// stream with nil.
func TestServeStream(t *testing.T) {
	p := startPipe(t, context.Background(), New(AllBugs).ServeStream)
	// One synchronous Write: it returns once the server's reader took it all,
	// so the Close below cannot cut it short.
	_, _ = io.WriteString(p.in, req("1", `"echo"`, "[1]")+"\n\n  \r\n"+
		`{"jsonrpc":"2.0","method":"echo"}`+"\r\n"+
		`{"jsonrpc":"2.0","id":2,"method":"add","params":[2,3]}`+"\r\n"+
		`{"jsonrpc":`+"\n"+
		req(`"last"`, `"echo"`, ""))
	for _, want := range []string{ok("1", "[1]"), ok("2", "5"), parseErr("unexpected end of input at offset 11")} {
		if got := p.line(t); got != want {
			t.Errorf("reply %s\nwant  %s", got, want)
		}
	}
	_ = p.in.Close() // the last line has no '\n': EOF ends it
	if got := p.line(t); got != ok(`"last"`, "null") {
		t.Errorf("reply to the last line %s", got)
	}
	if err := <-p.done; err != nil {
		t.Errorf("ServeStream at EOF: %v", err)
	}
	if rest, _ := io.ReadAll(p.out); len(rest) != 0 {
		t.Errorf("extra output %q", rest)
	}
}

// TestServeStreamCrash: a planted crash ends the stream with the Crash as
// error after the earlier replies; nothing later is answered.
func TestServeStreamCrash(t *testing.T) {
	for _, b := range []Bug{DeepNesting, HugeID, DuplicateKey, LoneSurrogate, BigBatch} {
		t.Run(b.String(), func(t *testing.T) {
			p := startPipe(t, context.Background(), New(b).ServeStream)
			p.send(t, req("1", `"echo"`, "")+"\n"+string(TriggerFrame(b))+"\n"+req("2", `"echo"`, "")+"\n")
			if got := p.line(t); got != ok("1", "null") {
				t.Errorf("first reply %s", got)
			}
			err := <-p.done
			var crash Crash
			if !errors.As(err, &crash) || crash.Bug != b || err.Error() != "fuzztarget: planted bug "+b.String() {
				t.Errorf("ServeStream = %v, want the %v crash", err, b)
			}
			if rest, _ := io.ReadAll(p.out); len(rest) != 0 {
				t.Errorf("answered after the crash: %q", rest)
			}
		})
	}
}

// TestServeStreamHang: after a planted hang the stream answers nothing, and
// ServeStream returns when the input ends, or when ctx does.
func TestServeStreamHang(t *testing.T) {
	for _, end := range []string{"EOF", "context"} {
		t.Run(end, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := startPipe(t, ctx, New(Hang).ServeStream)
			_, _ = io.WriteString(p.in, req("1", `"echo"`, "")+"\n")
			if got := p.line(t); got != ok("1", "null") {
				t.Errorf("first reply %s", got)
			}
			// Written synchronously: each Write returns once the server has read it.
			_, _ = io.WriteString(p.in, string(TriggerFrame(Hang))+"\n")
			_, _ = io.WriteString(p.in, req("2", `"echo"`, "")+"\n")
			if end == "EOF" {
				_ = p.in.Close()
			} else {
				cancel()
			}
			if err := <-p.done; err != nil {
				t.Errorf("ServeStream = %v, want nil", err)
			}
			if rest, _ := io.ReadAll(p.out); len(rest) != 0 {
				t.Errorf("answered after the hang: %q", rest)
			}
		})
	}
}

// TestServeStreamContext: cancelling ctx ends a stream blocked in a Read.
func TestServeStreamContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := startPipe(t, ctx, New(0).ServeStream)
	cancel()
	if err := <-p.done; err != nil {
		t.Errorf("ServeStream = %v, want nil", err)
	}
}

// TestServeStreamContentLength: LSP framing both ways, and headers that
// cannot be read answered with -32700 before the stream ends.
func TestServeStreamContentLength(t *testing.T) {
	cl := func(s string) string { return "Content-Length: " + strconv.Itoa(len(s)) + "\r\n\r\n" + s }
	echo := req("1", `"echo"`, "[1]")
	for _, tc := range []struct {
		name, in, want string
	}{
		{"frames", cl(echo) + "content-length:  " + strconv.Itoa(len(echo)) + "\nContent-Type: x\n\n" + echo + cl(`{"jsonrpc":"2.0","method":"echo"}`) + cl(""),
			cl(ok("1", "[1]")) + cl(ok("1", "[1]")) + cl(parseErr("unexpected end of input at offset 0"))},
		{"no length", "Content-Type: x\r\n\r\n" + echo, cl(parseErr("no Content-Length header"))},
		{"bad length", "Content-Length: 1x\r\n\r\n", cl(parseErr("Content-Length is not a decimal number"))},
		{"two lengths", "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", cl(parseErr("two different Content-Length headers"))},
		{"a JSON line", cl(echo) + echo + "\n", cl(ok("1", "[1]")) + cl(parseErr("malformed header line"))},
		{"short body", "Content-Length: 10\r\n\r\n{}", cl(parseErr("stream ended inside a frame"))},
		{"ends in a header", "Content-Length: 10\r\n", cl(parseErr("stream ended inside a header"))},
		{"huge header", "X: " + strings.Repeat("a", 8<<10) + "\r\n", cl(parseErr("header block over 8192 bytes"))},
		{"plus sign", "Content-Length: +1\r\n\r\n{", cl(parseErr("Content-Length is not a decimal number"))},
		{"length beyond int64", "Content-Length: 99999999999999999999999\r\n\r\n", cl(invalid("null", "request too large"))},
		{"too large", "Content-Length: " + strconv.Itoa(MaxFrame+1) + "\r\n\r\n", cl(invalid("null", "request too large"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := New(AllBugs).ServeStreamContentLength(context.Background(), strings.NewReader(tc.in), &out)
			if err != nil {
				t.Errorf("ServeStreamContentLength = %v", err)
			}
			if out.String() != tc.want {
				t.Errorf("output\n %q\nwant\n %q", out.String(), tc.want)
			}
		})
	}
}

// TestServeStreamTooLarge: a line over the limit (MaxFrame, lowered here)
// gets -32600 and ends the stream; a line of exactly the limit is read.
func TestServeStreamTooLarge(t *testing.T) {
	exact := `{"jsonrpc":"2.0","method":"echo","params":["` // a notification: no reply
	const limit = 1000
	exact += strings.Repeat("a", limit-len(exact)-3) + `"]}`
	for _, tc := range []struct{ name, in, want string }{
		{"over", strings.Repeat(" ", limit+1) + "\n" + req("1", `"echo"`, "") + "\n", invalid("null", "request too large") + "\n"},
		{"exact", exact + "\r\n" + req("1", `"echo"`, "") + "\n", ok("1", "null") + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s := New(0)
			s.maxFrame = limit
			if err := s.ServeStream(context.Background(), strings.NewReader(tc.in), &out); err != nil {
				t.Errorf("ServeStream = %v", err)
			}
			if out.String() != tc.want {
				t.Errorf("output %.200q, want %q", out.String(), tc.want)
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestServeStreamErrors: read and write failures come back wrapped.
func TestServeStreamErrors(t *testing.T) {
	err := New(0).ServeStream(context.Background(), strings.NewReader(req("1", `"echo"`, "")), failWriter{})
	if err == nil || !strings.Contains(err.Error(), "writing a reply: broken pipe") {
		t.Errorf("write failure: %v", err)
	}
	r := io.MultiReader(strings.NewReader("[1"), iotestErrReader{})
	err = New(0).ServeStream(context.Background(), r, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "reading a frame: connection reset") {
		t.Errorf("read failure: %v", err)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestServeStreamMCPSession: MCP has no batches, so once a connection
// started an MCP session (initialize answered with a result) an array is
// one invalid request; before, and on another connection, it is a batch.
// The tokenizer's bugs still fire on an array of a session.
func TestServeStreamMCPSession(t *testing.T) {
	const batch = `[{"jsonrpc":"2.0","id":5,"method":"echo"}]`
	initialize := req("1", `"initialize"`, `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	for _, tc := range []struct {
		name, in string
		want     []string // the prefix of each reply
	}{
		{"no session", batch, []string{`[{"jsonrpc":"2.0","id":5,"result":null}]`}},
		{"after a refused initialize", req("1", `"initialize"`, `[]`) + "\n" + batch,
			[]string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602`, `[{"jsonrpc":"2.0","id":5,"result":null}]`}},
		{"in a session", initialize + "\n" + batch,
			[]string{`{"jsonrpc":"2.0","id":1,"result":{`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := New(0).ServeStream(context.Background(), strings.NewReader(tc.in+"\n"), &out); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("replies %q, want %d", lines, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("reply %d %s, want %s…", i, lines[i], w)
				}
			}
		})
	}
	var out bytes.Buffer
	deep := strings.Repeat("[", 70) + strings.Repeat("]", 70)
	err := New(DeepNesting).ServeStream(context.Background(), strings.NewReader(initialize+"\n"+deep+"\n"), &out)
	if _, crashed := err.(Crash); !crashed {
		t.Errorf("an array 70 deep in an MCP session with deep_nesting planted: %v, want the crash", err)
	}
}
