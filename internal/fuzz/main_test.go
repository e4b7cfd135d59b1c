package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// childEnv makes the test binary a child-process target: "bugs=LIST" serves
// fuzztarget with those planted bugs on stdin and stdout (a planted crash
// exits with status 2 and a panic line on stderr, like a Go server), "die"
// exits with status 3 at the first line it reads, "parsedie" serves
// fuzztarget without bugs and ends its session (exit status 1) after
// answering a line that is not JSON, as some language servers do,
// "shuffle=DURATION" serves the reference server answering in any order
// (testsrv.Config.Shuffle), "http=ADDR/LIST" serves fuzztarget with those
// bugs over HTTP on ADDR, a process that a planted crash ends
// (fuzztarget's ExitOnCrash), "lifecycle=mcp" and "lifecycle=lsp" serve
// the planted lifecycle bug (lifecycleChild).
const childEnv = "RPCFUZZ_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	if mode == "die" {
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return 0
		}
		fmt.Fprintln(os.Stderr, "fatal error: this server dies at every input")
		return 3
	}
	if mode == "parsedie" {
		return parseDieChild()
	}
	if d, ok := strings.CutPrefix(mode, "shuffle="); ok {
		return shuffledChild(d)
	}
	if spec, ok := strings.CutPrefix(mode, "http="); ok {
		return httpServer(spec)
	}
	if p, ok := strings.CutPrefix(mode, "lifecycle="); ok {
		return lifecycleChild(p)
	}
	if mode == "sequential" {
		return sequentialChild()
	}
	list, ok := strings.CutPrefix(mode, "bugs=")
	if !ok {
		fmt.Fprintf(os.Stderr, "bad %s %q\n", childEnv, mode)
		return 1
	}
	bugs, err := fuzztarget.ParseBugs(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = fuzztarget.New(bugs).ServeStream(context.Background(), os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "panic: %v\n\ngoroutine 1 [running]:\nmain.serve()\n", err)
		return 2
	}
	return 0
}

// sequentialChild answers each request line before it reads the next, on
// unbuffered stdout, with a result of a kilobyte: a server that stops
// reading while its replies are not read (as mcp-go over stdio did).
func sequentialChild() int {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	pad := strings.Repeat("r", 1024)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m wire.Message
		if wire.Scan(line, &m); m.Kind != wire.KindRequest {
			continue
		}
		if _, err := fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":"%s"}`+"\n", m.ID, pad); err != nil {
			return 1
		}
	}
}

// shuffledChild serves the reference server on stdin and stdout, each
// reply held for a random time below d.
func shuffledChild(d string) int {
	shuffle, err := time.ParseDuration(d)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := testsrv.New(testsrv.Config{Shuffle: shuffle})
	if err == nil {
		err = srv.ServeStdio(os.Stdin, os.Stdout, testsrv.FramingNewline)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// httpServer serves fuzztarget over HTTP on ADDR of "ADDR/BUGS" until a
// planted crash ends the process (status 2, the panic on stderr).
func httpServer(spec string) int {
	addr, list, _ := strings.Cut(spec, "/")
	bugs, err := fuzztarget.ParseBugs(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := fuzztarget.New(bugs).ExitOnCrash().Listen(context.Background(), fuzztarget.Addrs{HTTP: addr}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening on", l.HTTP)
	l.Wait()
	return 0
}

// lifecycleChild is a server with a planted lifecycle bug, for profile
// "mcp" (newline framing) or "lsp" (Content-Length framing) on stdin and
// stdout: initialize gets a result the profile's handshake accepts, and
// every other message fuzztarget's correct answer (an array is one invalid
// request: neither protocol has batches); but a tools/call (mcp)
// or a textDocument/ request (lsp) before any initialize crashes it (a
// panic line, exit status 2). A connection that did the profile's
// handshake never meets the bug.
func lifecycleChild(prof string) int {
	next := transport.NewRequestLineReader(os.Stdin, 1<<20).Next
	frame := func(b []byte) []byte { return append(b, '\n') }
	result := `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"planted","version":"0"}}`
	planted := func(method string) bool { return method == "tools/call" }
	if prof == "lsp" {
		next = transport.NewRequestCLReader(os.Stdin, 1<<20).Next
		frame = func(b []byte) []byte { return append([]byte("Content-Length: "+strconv.Itoa(len(b))+"\r\n\r\n"), b...) }
		result = `{"capabilities":{}}`
		planted = func(method string) bool { return strings.HasPrefix(method, "textDocument/") }
	}
	srv := fuzztarget.New(0)
	out := bufio.NewWriter(os.Stdout)
	initialized := false
	var m wire.Message
	for {
		f, err := next()
		if err != nil {
			return 0 // the end of input, or framing it cannot read: an orderly exit
		}
		wire.Scan(f, &m)
		var method string
		if name, ok := wire.Unquote(nil, m.Method); ok {
			method = string(name)
		}
		var reply []byte
		switch {
		case m.Kind == wire.KindRequest && m.Problems == 0 && method == "initialize":
			initialized = true
			reply = []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)
		case m.Kind == wire.KindBatch && !m.Problems.Has(wire.ProblemInvalidJSON):
			// Neither protocol has batches: an array is one invalid request.
			reply = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`)
		case m.Kind == wire.KindRequest && m.Problems == 0 && !initialized && planted(method):
			fmt.Fprintf(os.Stderr, "panic: planted lifecycle bug: %s before initialize\n\ngoroutine 1 [running]:\nmain.serve()\n", method)
			return 2
		default:
			reply = srv.Handle(context.Background(), f)
		}
		if reply == nil {
			continue
		}
		out.Write(frame(reply))
		if out.Flush() != nil {
			return 0
		}
	}
}

// parseDieChild answers each line as fuzztarget does and exits with
// status 1 after the -32700 of a line that is not JSON.
func parseDieChild() int {
	srv := fuzztarget.New(0)
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if reply := srv.Handle(context.Background(), bytes.TrimSpace(line)); reply != nil {
				out.Write(append(reply, '\n'))
			}
			if !json.Valid(line) {
				out.Flush()
				fmt.Fprintln(os.Stderr, "fatal: cannot parse the message, closing the session")
				return 1
			}
		}
		if in.Buffered() == 0 {
			out.Flush()
		}
		if err != nil {
			out.Flush()
			return 0
		}
	}
}
