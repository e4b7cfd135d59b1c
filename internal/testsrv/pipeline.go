package testsrv

import (
	"bytes"
	"net"
	"strconv"
	"sync/atomic"
)

// PipelineDepth is, with Config.TrackPipelining, the most HTTP/1.1 requests
// that had arrived on one connection unanswered when the server began to
// answer the first of them: 1 for a client that waits for each response
// before it sends the next request, N for one that pipelines N deep.
func (s *Server) PipelineDepth() int64 { return s.pipeDepth.Load() }

// trackPipelining wraps the HTTP listener when Config.TrackPipelining asks
// for it, so each connection counts the requests that reach it.
func (s *Server) trackPipelining(ln net.Listener) net.Listener {
	if !s.cfg.TrackPipelining {
		return ln
	}
	return pipelineListener{ln}
}

type pipelineListener struct{ net.Listener }

func (l pipelineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &pipelineConn{Conn: c}, nil
}

// pipelineConn counts the requests read from it whole (head and
// Content-Length body), whatever net/http's reads cut them into; its
// connection's handler counts the ones it began to answer.
type pipelineConn struct {
	net.Conn
	arrived  atomic.Int64
	answered int64  // by the connection's one HTTP/1.1 handler at a time
	head     []byte // the head of the request being read
	body     int64  // body bytes of the current request still to come
}

func (c *pipelineConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.count(p[:n])
	return n, err
}

// count follows the request stream through b.
func (c *pipelineConn) count(b []byte) {
	for len(b) > 0 {
		if c.body > 0 {
			k := min(int64(len(b)), c.body)
			c.body -= k
			b = b[k:]
			if c.body == 0 {
				c.arrived.Add(1)
			}
			continue
		}
		c.head = append(c.head, b[0])
		b = b[1:]
		if !bytes.HasSuffix(c.head, []byte("\r\n\r\n")) {
			continue
		}
		c.body = contentLength(c.head)
		c.head = c.head[:0]
		if c.body == 0 {
			c.arrived.Add(1)
		}
	}
}

// contentLength reads Content-Length from a request head (0 without one).
func contentLength(head []byte) int64 {
	for line := range bytes.SplitSeq(head, []byte("\r\n")) {
		name, value, ok := bytes.Cut(line, []byte{':'})
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
			n, _ := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
			return max(n, 0)
		}
	}
	return 0
}

// notePipelined is called as a request on c begins to be answered: the
// requests that arrived and were not answered yet, this one included, are
// how deep the client had pipelined.
func (s *Server) notePipelined(c *pipelineConn) {
	depth := c.arrived.Load() - c.answered
	c.answered++
	for {
		m := s.pipeDepth.Load()
		if depth <= m || s.pipeDepth.CompareAndSwap(m, depth) {
			return
		}
	}
}
