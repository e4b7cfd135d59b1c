package shardhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/listen"
)

// shutdownGrace bounds how long Close waits for the answers in progress
// (the acknowledgement that ended the wait among them).
const shutdownGrace = 2 * time.Second

// Server is a shard's side of the protocol: it serves the run's state from
// before the run starts, and its result once it is done, until a merger
// acknowledges it.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	served chan struct{} // closed when Serve has returned

	mu     sync.Mutex
	status Status
	result []byte
	etag   string

	acked     chan struct{} // closed by the first acknowledgement accepted
	ackOnce   sync.Once
	ackedBy   string
	closeOnce sync.Once
	closeErr  error
}

// Listen serves the protocol on addr (host:port, port 0 for a free one),
// loopback only unless anyHost (listen.Local). shard is the run's --shard
// ("i/n", or ""). The run is Running until Done or Fail.
func Listen(addr string, anyHost bool, shard string) (*Server, error) {
	ln, err := listen.Local(addr, anyHost)
	if err != nil {
		return nil, fmt.Errorf("result %w", err)
	}
	s := &Server{ln: ln, served: make(chan struct{}), acked: make(chan struct{}),
		status: Status{Shard: shard, State: Running}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+StatusPath, s.serveStatus)
	mux.HandleFunc("GET "+ResultPath, s.serveResult)
	mux.HandleFunc("POST "+AckPath, s.serveAck)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // ErrServerClosed after Close
	}()
	return s, nil
}

// Addr is the address served on (with the port picked, for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// SetShard says which shard the run is ("i/n"), once that is known.
func (s *Server) SetShard(shard string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.Shard = shard
}

// Done makes the run done with result, the exact bytes of its result file,
// and the exit code it will exit with (0, or 1 for findings).
func (s *Server) Done(result []byte, exitCode int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.State, s.status.ExitCode, s.status.Error = Done, &exitCode, ""
	s.result, s.etag = result, ETag(result)
}

// Fail makes the run failed: it ended with exitCode for the reason msg,
// with no result to merge.
func (s *Server) Fail(exitCode int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.State, s.status.ExitCode, s.status.Error = Failed, &exitCode, msg
	s.result, s.etag = nil, ""
}

// Wait waits until a merger acknowledges the result (or the failure), at
// most timeout, or until ctx is done. by is the address of the merger that
// acknowledged, "" when none did.
func (s *Server) Wait(ctx context.Context, timeout time.Duration) (by string) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.acked:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.ackedBy
	case <-t.C:
	case <-ctx.Done():
	}
	return ""
}

// Close stops serving, letting the answers in progress finish (for at most
// a couple of seconds). Calling it again returns the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		err := s.srv.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.srv.Close())
		}
		<-s.served
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.closeErr = fmt.Errorf("closing the result server on %s: %w", s.Addr(), err)
		}
	})
	return s.closeErr
}

func (s *Server) snapshot() (Status, []byte, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	if st.ExitCode != nil {
		code := *st.ExitCode
		st.ExitCode = &code
	}
	return st, s.result, s.etag
}

func (s *Server) serveStatus(w http.ResponseWriter, _ *http.Request) {
	st, _, _ := s.snapshot()
	writeStatus(w, http.StatusOK, st)
}

func (s *Server) serveResult(w http.ResponseWriter, _ *http.Request) {
	st, result, etag := s.snapshot()
	switch st.State {
	case Running:
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusServiceUnavailable, st)
	case Failed:
		writeStatus(w, http.StatusConflict, st)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(result)
	}
}

func (s *Server) serveAck(w http.ResponseWriter, r *http.Request) {
	st, _, etag := s.snapshot()
	switch {
	case st.State == Running:
		writeStatus(w, http.StatusConflict, st)
		return
	case st.State == Done && r.Header.Get("If-Match") != etag:
		w.Header().Set("ETag", etag)
		writeStatus(w, http.StatusPreconditionFailed, st)
		return
	}
	w.WriteHeader(http.StatusNoContent)
	s.ackOnce.Do(func() {
		s.mu.Lock()
		s.ackedBy = r.RemoteAddr
		s.mu.Unlock()
		close(s.acked)
	})
}

func writeStatus(w http.ResponseWriter, code int, st Status) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}
