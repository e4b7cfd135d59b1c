package engine

import (
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
)

// recordingStream is a transport.Stream that keeps what was flushed and
// answers each control request (ids "rpcload-N") with the result the test
// gives for its method.
type recordingStream struct {
	mu      sync.Mutex
	queued  []string
	flushed []string
	replies chan []byte
	results map[string]string // method -> result JSON
}

func (s *recordingStream) Send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = append(s.queued, string(msg))
	return nil
}

func (s *recordingStream) Flush(time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.queued {
		s.flushed = append(s.flushed, m)
		var msg wire.Message
		if wire.Scan([]byte(m), &msg); msg.Kind == wire.KindRequest {
			name, _ := wire.Unquote(nil, msg.Method)
			s.replies <- []byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + s.results[string(name)] + `}`)
		}
	}
	s.queued = nil
	return nil
}

func (s *recordingStream) Recv() ([]byte, error) {
	r, ok := <-s.replies
	if !ok {
		return nil, io.EOF
	}
	return r, nil
}

func (s *recordingStream) Close() error { return nil }

// TestHandshakeIsOnTheWireWhenItReturns: the handshake's notifications
// (initialized, didOpen) are written, in order, before handshake returns,
// so the first request of the load can never overtake them. (They once went
// through the outbox, and a load request could reach the server before
// didOpen and be refused.)
func TestHandshakeIsOnTheWireWhenItReturns(t *testing.T) {
	p, err := profile.New(profile.LSP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		st := &recordingStream{replies: make(chan []byte, 4), results: map[string]string{"initialize": `{"capabilities":{}}`}}
		r := &run{cfg: &Config{Steps: []profile.Step{profile.DidOpen("/w/a.go", []byte("package a"))}, Plan: workload.Plan{Timeout: time.Second}}, prof: p}
		var wmu sync.Mutex
		readerDone := make(chan struct{})
		s := newSession(r, st, &wmu, readerDone)
		go func() { // the reader: hands control replies to the session
			defer close(readerDone)
			var m wire.Message
			for {
				frame, err := st.Recv()
				if err != nil {
					return
				}
				wire.Scan(frame, &m)
				s.control(&m, frame)
			}
		}()
		if _, err := s.handshake(); err != nil {
			t.Fatal(err)
		}
		st.mu.Lock()
		got := strings.Join(st.flushed, "\n")
		st.mu.Unlock()
		close(st.replies)
		s.stop()
		i, j, k := strings.Index(got, `"initialize"`), strings.Index(got, `"initialized"`), strings.Index(got, `"textDocument/didOpen"`)
		if i < 0 || j < i || k < j {
			t.Fatalf("on the wire when handshake returned:\n%s\nwant initialize, initialized, didOpen in that order", got)
		}
	}
}
