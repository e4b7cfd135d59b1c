package nativefuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/handler"
	"github.com/rpcload/rpcload/rpcfuzz"
)

// jrpc2Methods are the jrpc2 server's methods: echo returns its params as
// they came (null when it has none); add takes [a, b] and returns a+b.
var jrpc2Methods = handler.Map{
	"echo": handler.New(func(_ context.Context, req *jrpc2.Request) (json.RawMessage, error) {
		if !req.HasParams() {
			// An empty json.RawMessage does not marshal: the call would
			// fail with -32098 instead of answering.
			return json.RawMessage("null"), nil
		}
		return json.RawMessage(req.ParamString()), nil
	}),
	"add": handler.New(func(_ context.Context, p [2]int) int { return p[0] + p[1] }),
}

// jrpc2Target serves each message on a fresh jrpc2 server over an
// in-memory channel.
//
// rpcfuzz.Stream, the obvious target for a stream server, does not fit
// jrpc2 v1.3.6, for three reasons of the server's own:
//   - at the end of its input (EOF), the server drops every request still
//     queued and cancels those in flight (Server.stopLocked), and Stream's
//     input is all readable at once, so most calls of an input would go
//     unanswered or be answered -32097 "context canceled";
//   - it answers the messages of one connection concurrently, in any order
//     (which JSON-RPC allows), so replies would pass the sync requests
//     Stream uses to tell which message they answer;
//   - a message with a method but an invalid envelope and no id, still
//     queued at EOF, is kept and then answered on a nil channel: a
//     nil-pointer panic on a goroutine of the server's, which kills the test
//     process (../testdata/fuzz-baselines/jrpc2-stdio.txt).
//
// So each message gets a server of its own, followed by a barrier request
// on the same channel. The server takes messages from its channel in
// order, so once the barrier is answered the message has left the queue
// and its handlers are assigned; once they have returned too, the channel
// reports EOF, which cancels nothing that still runs, and Server.Wait
// returns when every reply is written. With the queue empty at EOF,
// nothing is dropped and the panic cannot happen. The cost: each message of
// an input sees a new server, so what one message does to the next (the
// same id twice) is not tested.
type jrpc2Target struct{ methods jrpc2.Assigner }

// jrpc2BarrierID is the barrier request's id: no fuzz input uses it, so
// no reply to an input is taken for the barrier's.
const jrpc2BarrierID = `"nativefuzz-barrier"`

// jrpc2Barrier calls a method the server does not have: its -32601 error
// is as good an answer as any, and no handler runs.
var jrpc2Barrier = []byte(`{"jsonrpc":"2.0","id":` + jrpc2BarrierID + `,"method":"nativefuzz.barrier"}`)

// RoundTrip sends frame to a fresh server and returns its reply.
func (t jrpc2Target) RoundTrip(ctx context.Context, frame []byte) ([]byte, error) {
	ch := &memChannel{in: make(chan []byte, 2), barrier: make(chan struct{})}
	methods := &trackingAssigner{Assigner: t.methods}
	srv := jrpc2.NewServer(methods, nil).Start(ch)
	ch.in <- frame
	ch.in <- jrpc2Barrier
	handlersDone := make(chan struct{})
	go func() {
		<-ch.barrier
		methods.running.Wait()
		close(handlersDone)
	}()
	select {
	case <-handlersDone:
	case <-ctx.Done():
		// A hang. The server is left running: ending its channel now could
		// trip the panic above, with the message still queued.
		return nil, ctx.Err()
	}
	close(ch.in)
	if err := srv.Wait(); err != nil {
		return nil, err
	}
	switch out := ch.replies(); len(out) {
	case 0:
		return nil, nil
	case 1:
		return out[0], nil
	default:
		// One message is one record in, so at most one record (a batch's
		// is one array) may come out.
		return nil, fmt.Errorf("%d replies to one message: %q", len(out), out)
	}
}

// trackingAssigner counts the handlers it assigns until they return. The
// server assigns the handlers of a message when it takes the message from
// its queue, so after the barrier's reply every handler of the message is
// counted.
type trackingAssigner struct {
	jrpc2.Assigner
	running sync.WaitGroup
}

// Assign returns the method's handler, counted while it runs.
func (a *trackingAssigner) Assign(ctx context.Context, method string) jrpc2.Handler {
	h := a.Assigner.Assign(ctx, method)
	if h == nil {
		return nil
	}
	a.running.Add(1)
	return func(ctx context.Context, req *jrpc2.Request) (any, error) {
		defer a.running.Done()
		return h(ctx, req)
	}
}

// Names lists the methods for rpc.serverInfo, as the server would without
// the wrapper.
func (a *trackingAssigner) Names() []string {
	if n, ok := a.Assigner.(jrpc2.Namer); ok {
		return n.Names()
	}
	return nil
}

// memChannel is the server's end of an in-memory channel.Channel that
// keeps every record the server sends.
type memChannel struct {
	in      chan []byte // records for the server; closed for EOF
	barrier chan struct{}

	mu   sync.Mutex
	out  [][]byte
	seen bool // the barrier's reply came
}

// Recv returns the next record for the server, or io.EOF.
func (c *memChannel) Recv() ([]byte, error) {
	msg, ok := <-c.in
	if !ok {
		return nil, io.EOF
	}
	return msg, nil
}

// Send keeps a reply of the server's, and notes the barrier's.
func (c *memChannel) Send(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m struct{ ID json.RawMessage }
	if !c.seen && json.Unmarshal(msg, &m) == nil && bytes.Equal(m.ID, []byte(jrpc2BarrierID)) {
		c.seen = true
		close(c.barrier)
		return nil
	}
	c.out = append(c.out, bytes.Clone(msg))
	return nil
}

// Close does nothing: the server closes its channel at EOF, while replies
// to messages it took before may still be on their way, and those must
// not be lost.
func (c *memChannel) Close() error { return nil }

func (c *memChannel) replies() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out
}

// jrpc2Options are FuzzJRPC2's options: the methods and the deviations of
// jrpc2 v1.3.6 found by black-box fuzzing
// (../testdata/fuzz-baselines/jrpc2-stdio.txt) that a message on a fresh
// server can show. (The others need a connection that lives on: an id
// once answered with an error is refused as a duplicate for good; and the
// panic above. Its -32600 to a notification with method "" is none: the
// oracle allows it, since "" names no method.)
var jrpc2Options = rpcfuzz.Options{
	Methods: []string{"echo", "add"},
	Params: map[string]json.RawMessage{
		"add": json.RawMessage(`{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}`),
	},
	Timeout: fuzzTimeout,
	Ignore: []string{
		// JSON-RPC 2.0 §5.1 (-32700 is for invalid JSON, -32600 for JSON
		// that is not a valid Request object): jrpc2 answers valid JSON
		// that is no request (0 or [] as a batch element, a method or
		// jsonrpc that is not a string) with -32700. (Inside a batch, the
		// oracle gives that -32700 to the element it answers wrongly, not
		// to a notification or to an element that an id-null -32600 next
		// to it answers as well; see TestIgnoredDeviations.)
		"wrong_error_code",
	},
}

// FuzzJRPC2 fuzzes a creachadair/jrpc2 server with plain JSON-RPC 2.0.
func FuzzJRPC2(f *testing.F) {
	rpcfuzz.Fuzz(f, jrpc2Target{jrpc2Methods}, jrpc2Options)
}
