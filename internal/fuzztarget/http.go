package fuzztarget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// HTTPHandler serves JSON-RPC over HTTP POST on any path: one frame per
// body; 200 with an application/json reply, 204 when there is none; 405 for
// other methods; 413 (with a -32600 body) past MaxFrame. A planted crash
// panics out of the handler, so net/http logs it and aborts the connection
// without a response; a planted hang holds the request until the client
// leaves (or the server closes), then aborts it the same way.
func (s *Server) HTTPHandler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "fuzztarget: only POST is served", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.maxFrame)))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			writeJSON(w, http.StatusRequestEntityTooLarge,
				errorReply(nil, wire.CodeInvalidRequest, msgInvalidRequest, errTooLarge.Error()))
			return
		}
		http.Error(w, "fuzztarget: reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.exit {
		defer func() {
			v := recover()
			if c, ok := v.(Crash); ok {
				die(c)
			}
			if v != nil {
				panic(v) // a hang's abort
			}
		}()
	}
	reply, hang := s.answer(body)
	switch {
	case hang:
		<-r.Context().Done()
		panic(http.ErrAbortHandler) // no response: the client left, or the server closes
	case reply == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusOK, reply)
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that went away is not the server's error
}

// Addrs are the addresses Listen serves on; "" leaves a transport out.
type Addrs struct {
	HTTP string // HTTP POST on every path (HTTPHandler)
	TCP  string // newline-delimited JSON (ServeStream), one stream per connection
}

// Listeners are the bound addresses of Listen ("" for a transport left
// out), and the wait for its end.
type Listeners struct {
	Addrs
	wg *sync.WaitGroup
}

// Wait blocks until the listeners and connections of Listen are closed
// (after its ctx ended).
func (l *Listeners) Wait() { l.wg.Wait() }

// Listen serves s on addrs until ctx ends, then closes the listeners and
// every connection. Messages go to logw (nil discards them): net/http's report of a crash (with
// its stack), and one line per TCP crash, whose connection is reset (the
// client sees ECONNRESET) while the other connections go on being served.
// An address that cannot be bound is an error, and nothing is served.
func (s *Server) Listen(ctx context.Context, addrs Addrs, logw io.Writer) (*Listeners, error) {
	if logw == nil {
		logw = io.Discard
	}
	logw = &lockedWriter{w: logw}
	var lc net.ListenConfig
	var hl, tl net.Listener
	var err error
	if addrs.HTTP != "" {
		if hl, err = lc.Listen(ctx, "tcp", addrs.HTTP); err != nil {
			return nil, fmt.Errorf("fuzztarget: HTTP: %w", err)
		}
	}
	if addrs.TCP != "" {
		if tl, err = lc.Listen(ctx, "tcp", addrs.TCP); err != nil {
			if hl != nil {
				_ = hl.Close()
			}
			return nil, fmt.Errorf("fuzztarget: TCP: %w", err)
		}
	}
	l := &Listeners{wg: new(sync.WaitGroup)}
	if hl != nil {
		l.HTTP = hl.Addr().String()
		srv := &http.Server{
			Handler:           s.HTTPHandler(),
			ErrorLog:          log.New(logw, "", 0),
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return ctx }, // ends held requests
		}
		stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
		l.wg.Go(func() {
			defer stop()
			_ = srv.Serve(hl) // ErrServerClosed after ctx: the only way it ends
		})
	}
	if tl != nil {
		l.TCP = tl.Addr().String()
		l.wg.Go(func() { s.serveTCP(ctx, tl, logw) })
	}
	return l, nil
}

// serveTCP accepts connections on ln until ctx ends (or Accept fails) and
// serves each with ServeStream.
func (s *Server) serveTCP(ctx context.Context, ln net.Listener, logw io.Writer) {
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(logw, "fuzztarget: TCP: %v\n", err)
			}
			return
		}
		conns.Go(func() { s.serveConn(ctx, c, logw) })
	}
}

func (s *Server) serveConn(ctx context.Context, c net.Conn, logw io.Writer) {
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	err := s.ServeStream(ctx, c, c)
	var crash Crash
	switch {
	case errors.As(err, &crash) && s.exit:
		die(crash)
	case errors.As(err, &crash):
		fmt.Fprintf(logw, "%v (TCP connection from %s reset)\n", crash, c.RemoteAddr())
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // Close sends RST: the abrupt end of a crashed server
		}
	case err != nil && ctx.Err() == nil:
		fmt.Fprintf(logw, "fuzztarget: TCP connection from %s: %v\n", c.RemoteAddr(), err)
	}
	_ = c.Close()
}

// lockedWriter serialises writes from the connections' goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
