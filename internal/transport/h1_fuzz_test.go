package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// sinkConn is the write side of a connection whose replies come from a
// fixed buffer: Post writes into it and reads H1Conn.br.
type sinkConn struct{ net.Conn }

func (sinkConn) Write(p []byte) (int, error)        { return len(p), nil }
func (sinkConn) SetDeadline(t time.Time) error      { return nil }
func (sinkConn) Close() error                       { return nil }
func (sinkConn) SetReadDeadline(t time.Time) error  { return nil }
func (sinkConn) SetWriteDeadline(t time.Time) error { return nil }

// FuzzH1Response feeds arbitrary bytes to H1Conn as a server's response. It
// must never panic or return more than MaxBody; success means a 2xx and
// *StatusError means anything else; and when net/http also parses the
// response, both read the same status and the same body.
func FuzzH1Response(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"), uint16(64))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4;x=y\r\n\":1}\r\n0\r\nT: 1\r\n\r\n"), uint16(64))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"), uint16(64))
	f.Add([]byte("HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\nboom"), uint16(2))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n7fffffffffffffff\r\n"), uint16(64))
	f.Add([]byte("HTTP/1.0 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"), uint16(4))
	u, _ := url.Parse("http://127.0.0.1:1/")
	head := requestHead(u, nil)
	f.Fuzz(func(t *testing.T, resp []byte, m uint16) {
		maxBody := int(m % 4096)
		c := &H1Conn{conn: sinkConn{}, br: bufio.NewReaderSize(bytes.NewReader(resp), 32<<10), head: head, maxBody: maxBody}
		body, code, err := c.Post([]byte("{}"), nil, time.Time{})
		if len(body) > maxBody {
			t.Fatalf("body of %d bytes with MaxBody %d", len(body), maxBody)
		}
		var se *StatusError
		switch {
		case err == nil && (code < 200 || code > 299):
			t.Fatalf("status %d without an error", code)
		case errors.As(err, &se) && (se.Code != code || code >= 200 && code <= 299):
			t.Fatalf("StatusError %d for status %d", se.Code, code)
		}
		if err != nil && se == nil {
			return
		}
		// Compare with net/http where it reads the same thing: one final
		// HTTP/1.1 response with a framing both understand (net/http
		// ignores Transfer-Encoding in HTTP/1.0 replies; H1Conn does not).
		hr, herr := http.ReadResponse(bufio.NewReader(bytes.NewReader(resp)), &http.Request{Method: http.MethodPost})
		if herr != nil || hr.StatusCode < 200 || !hr.ProtoAtLeast(1, 1) || len(hr.TransferEncoding) > 1 || hr.Header.Get("Content-Length") != "" && len(hr.Header.Values("Content-Length")) > 1 {
			return
		}
		hbody, herr := io.ReadAll(io.LimitReader(hr.Body, int64(maxBody)+1))
		if herr != nil {
			return
		}
		if hr.StatusCode != code {
			t.Fatalf("status %d; net/http reads %d", code, hr.StatusCode)
		}
		if !bytes.Equal(hbody, body) {
			t.Fatalf("body %q; net/http reads %q", body, hbody)
		}
	})
}
