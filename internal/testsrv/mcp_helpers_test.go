package testsrv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Helpers of the MCP and LSP tests: a client peer over a stream, reading
// frames in a goroutine so a missing reply fails the test instead of
// hanging it.

// protoLimit bounds every wait of these tests; reaching it is a failure.
const protoLimit = 20 * time.Second

// newProtoServer returns a server with cfg, closed when the test ends.
func newProtoServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// peer is the client side of one stream connection.
type peer struct {
	t       *testing.T
	w       io.Writer
	closeW  func() error // ends the client's sending side
	framing Framing
	frames  chan string
	done    chan error // the reader's end: nil error at EOF
}

func newPeer(t *testing.T, r io.Reader, w io.Writer, closeW func() error, f Framing) *peer {
	p := &peer{t: t, w: w, closeW: closeW, framing: f, frames: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		br := bufio.NewReader(r)
		for {
			frame, err := readTestFrame(br, f)
			if err != nil {
				close(p.frames)
				if errors.Is(err, io.EOF) {
					err = nil
				}
				p.done <- err
				return
			}
			p.frames <- frame
		}
	}()
	return p
}

// stdioPeer serves one connection with ServeStdio over pipes.
func stdioPeer(t *testing.T, s *Server, f Framing) (*peer, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(inR, outW, f) }()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	return newPeer(t, outR, inW, inW.Close, f), served
}

// tcpPeer connects to a TCP address of s.
func tcpPeer(t *testing.T, addr string, f Framing) *peer {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return newPeer(t, nc, nc, nc.(*net.TCPConn).CloseWrite, f)
}

func readTestFrame(br *bufio.Reader, f Framing) (string, error) {
	if f == FramingNewline {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		return strings.TrimSuffix(line, "\n"), nil
	}
	n := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				return "", err
			}
		}
	}
	if n < 0 {
		return "", errors.New("frame without Content-Length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(br, body)
	return string(body), err
}

// send writes one message, framed.
func (p *peer) send(msg string) {
	p.t.Helper()
	if p.framing == FramingContentLength {
		msg = "Content-Length: " + strconv.Itoa(len(msg)) + "\r\n\r\n" + msg
	} else {
		msg += "\n"
	}
	if _, err := io.WriteString(p.w, msg); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// next returns the next message the server sent, decoded.
func (p *peer) next() map[string]any {
	p.t.Helper()
	f := p.nextRaw()
	var m map[string]any
	if err := json.Unmarshal([]byte(f), &m); err != nil {
		p.t.Fatalf("server sent %q: %v", f, err)
	}
	return m
}

// nextRaw returns the next message the server sent as it was sent.
func (p *peer) nextRaw() string {
	p.t.Helper()
	select {
	case f, ok := <-p.frames:
		if !ok {
			p.t.Fatal("connection ended; expected a message")
		}
		return f
	case <-time.After(protoLimit):
		p.t.Fatal("no message from the server")
	}
	return ""
}

// closeAndEnd closes the client's sending side and checks that the server
// ends the connection without sending anything more.
func (p *peer) closeAndEnd() {
	p.t.Helper()
	_ = p.closeW()
	p.expectEnd()
}

// expectEnd checks that the connection ends with nothing more from the server.
func (p *peer) expectEnd() {
	p.t.Helper()
	select {
	case f, ok := <-p.frames:
		if ok {
			p.t.Fatalf("unexpected message %s", f)
		}
	case <-time.After(protoLimit):
		p.t.Fatal("the server did not end the connection")
	}
}

// get walks m along a dotted path ("result.content.0.text").
func get(m any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch v := m.(type) {
		case map[string]any:
			m = v[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(v) {
				return nil
			}
			m = v[i]
		default:
			return nil
		}
	}
	return m
}

// code returns a reply's error code, or 0.
func code(m map[string]any) int {
	c, _ := get(m, "error.code").(float64)
	return int(c)
}

// ctxT returns a context bounded by protoLimit.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), protoLimit)
	t.Cleanup(cancel)
	return ctx
}

// Modern request building: _meta as rpcload's profile sends it.
const metaModern = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// modernReq returns a modern request; params are members besides _meta.
func modernReq(id, method, params string) string {
	if params != "" {
		params = "," + params
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + metaModern + params + `}}`
}

// legacyInit is an initialize request for version v with id 1.
func legacyInit(v string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
}
