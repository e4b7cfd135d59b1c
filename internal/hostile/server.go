package hostile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a hostile server on 127.0.0.1.
type Server struct {
	// URL is the target to give rpcload or rpcfuzz (for MCP, the endpoint
	// of Streamable HTTP).
	URL string

	mode Mode
	ln   net.Listener
	quit chan struct{}
	once sync.Once
	wg   sync.WaitGroup

	mu    sync.Mutex // guards conns
	conns map[net.Conn]struct{}

	accepted atomic.Int64
	requests atomic.Int64
}

// Start starts a server misbehaving as m over t, on a free loopback port.
// Child-process transports have no server: see ServeChild.
func Start(m Mode, t Transport) (*Server, error) {
	if !Applies(m, t) {
		return nil, fmt.Errorf("hostile: mode %s does not apply to %s", m, t)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{mode: m, ln: ln, quit: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	addr := ln.Addr().String()
	var handle func(net.Conn)
	switch t {
	case TCP, TCPLSP:
		s.URL = string(t) + "://" + addr
		cl := t == TCPLSP
		handle = func(c net.Conn) { serveStream(c, c, cl, m, s.quit, func() { s.countRequest(); resetConn(c) }) }
	case HTTP:
		s.URL = "http://" + addr + "/"
		handle = s.serveHTTP
	case WS:
		s.URL = "ws://" + addr + "/ws"
		handle = s.serveWS
	case MCP:
		s.URL = "http://" + addr + "/mcp"
		handle = s.serveMCP
	default:
		ln.Close()
		return nil, fmt.Errorf("hostile: no server for transport %s", t)
	}
	s.wg.Add(1)
	go s.accept(handle)
	return s, nil
}

// Accepted is how many connections the server accepted.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

func (s *Server) countRequest() { s.requests.Add(1) }

func (s *Server) accept(handle func(net.Conn)) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		select {
		case <-s.quit:
			s.mu.Unlock()
			c.Close()
			return
		default:
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer s.forget(c)
			handle(c)
		}()
	}
}

func (s *Server) forget(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Close stops the server: the listener and every connection are closed,
// and Close waits for every goroutine the server started.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		close(s.quit)
		s.ln.Close()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

// resetConn closes c with a TCP reset rather than an orderly close.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// readHTTPRequest reads one HTTP/1.1 request and returns its body (at most
// maxRequest bytes; a longer one is an error) and its method and path.
func readHTTPRequest(br *bufio.Reader, body []byte) (method, path string, _ []byte, _ error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", "", body, err
	}
	f := bytes.Fields([]byte(line))
	if len(f) < 2 {
		return "", "", body, errors.New("hostile: bad request line")
	}
	method, path = string(f[0]), string(f[1])
	n := 0
	for total := 0; ; {
		h, err := br.ReadSlice('\n')
		total += len(h)
		if err != nil || total > 64<<10 {
			return "", "", body, errors.New("hostile: bad request header")
		}
		h = bytes.TrimSpace(h)
		if len(h) == 0 {
			break
		}
		if v, ok := bytes.CutPrefix(bytes.ToLower(h), []byte("content-length:")); ok {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil || n < 0 || n > maxRequest {
				return "", "", body, errors.New("hostile: bad request length")
			}
		}
	}
	body = append(body[:0], make([]byte, n)...)
	_, err = io.ReadFull(br, body)
	return method, path, body, err
}

// httpHead is the head of a JSON response with a body of n bytes (n < 0:
// chunked).
func httpHead(n int64) []byte {
	h := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
	if n < 0 {
		h = append(h, "Transfer-Encoding: chunked\r\n"...)
	} else {
		h = append(h, "Content-Length: "...)
		h = strconv.AppendInt(h, n, 10)
		h = append(h, "\r\n"...)
	}
	return append(h, "\r\n"...)
}

// chunkWriter writes each Write as one HTTP chunk.
type chunkWriter struct{ w io.Writer }

func (c chunkWriter) Write(p []byte) (int, error) {
	head := strconv.AppendInt(nil, int64(len(p)), 16)
	head = append(head, "\r\n"...)
	if _, err := c.w.Write(head); err != nil {
		return 0, err
	}
	if _, err := c.w.Write(p); err != nil {
		return 0, err
	}
	_, err := c.w.Write([]byte("\r\n"))
	return len(p), err
}

// serveHTTP is a hand-written HTTP/1.1 server, so that it can lie.
func (s *Server) serveHTTP(c net.Conn) {
	if s.mode == NeverRead {
		<-s.quit
		return
	}
	br := bufio.NewReader(c)
	var body []byte
	for {
		var err error
		_, _, body, err = readHTTPRequest(br, body)
		if err != nil {
			return
		}
		s.countRequest()
		q, ok := parse(body)
		id := q.ID
		if !ok {
			id = []byte("null")
		}
		reply := okReply(id)
		response := append(httpHead(int64(len(reply))), reply...)
		switch s.mode {
		case Reset:
			resetConn(c)
			return
		case HugeReply:
			if _, err := c.Write(httpHead(-1)); err != nil {
				return
			}
			cw := chunkWriter{c}
			pre := hugePrefix(id)
			if _, err := cw.Write(pre); err != nil {
				return
			}
			if writeFiller(cw, int64(HugeSize-len(pre)-len(hugeSuffix)), s.quit) != nil {
				return
			}
			if _, err := cw.Write(hugeSuffix); err != nil {
				return
			}
			if _, err := c.Write([]byte("0\r\n\r\n")); err != nil {
				return
			}
		case EndlessLine:
			if _, err := c.Write([]byte("HTTP/1.1 200 OK")); err == nil {
				writeFiller(c, -1, s.quit)
			}
			return
		case HugeLength:
			if _, err := c.Write(append(httpHead(HugeLengthValue), hugePrefix(id)...)); err == nil {
				<-s.quit
			}
			return
		case Slowloris:
			if trickle(c, response, s.quit) != nil {
				return
			}
		case Twice:
			if _, err := c.Write(append(response, response...)); err != nil {
				return
			}
		default:
			if _, err := c.Write(response); err != nil {
				return
			}
		}
	}
}

// sseHead is the head of a Streamable HTTP response carrying an SSE stream
// that ends with the connection.
var sseHead = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")

// serveMCP is a hand-written MCP Streamable HTTP server of the legacy era
// (a session opened by initialize): it answers the handshake correctly and
// misbehaves on every other request. Each response to a load request ends
// the connection (Connection: close), so streams need no chunking.
func (s *Server) serveMCP(c net.Conn) {
	br := bufio.NewReader(c)
	var body []byte
	for {
		method, _, b, err := readHTTPRequest(br, body)
		body = b
		if err != nil {
			return
		}
		if method == http.MethodDelete {
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
				return
			}
			continue
		}
		q, ok := parse(body)
		switch {
		case ok && q.Method == "initialize":
			reply := []byte(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`)
			head := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: hostile-1\r\nContent-Length: " + strconv.Itoa(len(reply)) + "\r\n\r\n")
			if _, err := c.Write(append(head, reply...)); err != nil {
				return
			}
			continue
		case ok && q.Method == "server/discover":
			reply := []byte(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`)
			head := []byte("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(reply)) + "\r\n\r\n")
			if _, err := c.Write(append(head, reply...)); err != nil {
				return
			}
			continue
		case !ok:
			// A notification, or the client's answer to a request of ours.
			if _, err := c.Write([]byte("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")); err != nil {
				return
			}
			continue
		}
		s.countRequest()
		s.mcpLoad(c, q)
		return
	}
}

// mcpLoad answers one load request over Streamable HTTP as the mode says,
// and leaves the connection to be closed.
func (s *Server) mcpLoad(c net.Conn, q request) {
	event := func(msg []byte) []byte { return append(append([]byte("data: "), msg...), "\n\n"...) }
	reply := okReply(q.ID)
	switch s.mode {
	case NeverRead:
		<-s.quit
	case Reset:
		resetConn(c)
	case HugeReply:
		pre := hugePrefix(q.ID)
		if _, err := c.Write(append(append([]byte(nil), sseHead...), append([]byte("data: "), pre...)...)); err != nil {
			return
		}
		if writeFiller(c, int64(HugeSize-len(pre)-len(hugeSuffix)), s.quit) != nil {
			return
		}
		c.Write(append(append([]byte(nil), hugeSuffix...), "\n\n"...))
	case EndlessLine:
		if _, err := c.Write(append(append([]byte(nil), sseHead...), append([]byte("data: "), hugePrefix(q.ID)...)...)); err == nil {
			writeFiller(c, -1, s.quit)
		}
	case HugeLength:
		if _, err := c.Write(append(httpHead(HugeLengthValue), hugePrefix(q.ID)...)); err == nil {
			<-s.quit
		}
	case KeepAlives:
		if _, err := c.Write(sseHead); err != nil {
			return
		}
		for {
			if _, err := c.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			if !pause(time.Millisecond, s.quit) {
				return
			}
		}
	case Slowloris:
		trickle(c, append(append([]byte(nil), sseHead...), event(reply)...), s.quit)
	case Flood:
		if _, err := c.Write(sseHead); err != nil {
			return
		}
		var msg, buf []byte
		for n := 0; n < floodMax; {
			select {
			case <-s.quit:
				return
			default:
			}
			buf = buf[:0]
			for range 64 {
				msg = floodMessage(msg[:0], n)
				buf = append(buf, event(msg)...)
				n++
			}
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	case Twice:
		c.Write(append(append(append([]byte(nil), sseHead...), event(reply)...), event(reply)...))
	default:
		c.Write(append(append([]byte(nil), sseHead...), event(reply)...))
	}
}
