// Package minclient is the floor the benchmark suite holds rpcload against:
// a JSON-RPC client that keeps a fixed number of requests in flight over
// newline-delimited TCP or WebSocket, pipelines them (one write for all the
// requests it may send), matches each reply to its request by id in a map,
// and does nothing else: no validation, no timeouts, no histograms. Whatever
// rpcload costs beyond it is the price of its checks and measurements.
package minclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Config describes one closed-loop run.
type Config struct {
	URL      string        // tcp://host:port (newline framing) or ws://host:port/path
	InFlight int           // requests kept in flight, shared out over the connections
	Conns    int           // connections
	Duration time.Duration // how long to send
	Method   string        // JSON-RPC method
	Params   string        // raw JSON params ("" for none)
	// Timed measures each round trip (one request in flight on one
	// connection only) and reports their median: a reference for the
	// latency rpcload measures, with nothing between the socket and the
	// clock.
	Timed bool
}

// Result is what a run counted.
type Result struct {
	Replies   uint64        `json:"replies"`   // replies matched to a pending request before the deadline
	Unmatched uint64        `json:"unmatched"` // replies whose id was not pending (a broken server)
	Elapsed   time.Duration `json:"elapsed_ns"`
	ReqPerS   float64       `json:"req_per_s"`        // Replies per second of Elapsed
	P50       time.Duration `json:"p50_ns,omitempty"` // with Timed: the median round trip
	Timed     int           `json:"timed,omitempty"`  // with Timed: round trips measured
}

// Run dials every connection, then keeps cfg.InFlight requests in flight
// for cfg.Duration, and returns the replies counted in that time.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Conns < 1 || cfg.InFlight < cfg.Conns || cfg.Duration <= 0 || cfg.Method == "" {
		return Result{}, fmt.Errorf("minclient: need conns >= 1, in flight >= conns, a duration and a method (got %+v)", cfg)
	}
	if cfg.Timed && (cfg.InFlight != 1 || cfg.Conns != 1) {
		return Result{}, errors.New("minclient: timing round trips needs exactly one request in flight on one connection")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return Result{}, fmt.Errorf("minclient: %w", err)
	}
	prefix, suffix := requestParts(cfg.Method, cfg.Params)
	conns := make([]*conn, 0, cfg.Conns)
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for i := range cfg.Conns {
		c, err := dial(ctx, u)
		if err != nil {
			return Result{}, err
		}
		c.prefix, c.suffix = prefix, suffix
		if cfg.Timed {
			c.rtts = make([]time.Duration, 0, 1<<16)
		}
		// Share the in-flight budget out as evenly as it goes.
		c.credits.Store(int64(cfg.InFlight/cfg.Conns + boolInt(i < cfg.InFlight%cfg.Conns)))
		conns = append(conns, c)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(conns))
	start := time.Now()
	for _, c := range conns {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- c.writeLoop(stop) }()
		go func() { defer wg.Done(); errs <- c.readLoop() }()
		c.signal()
	}
	timer := time.NewTimer(cfg.Duration)
	defer timer.Stop()
	var runErr error
	select {
	case <-timer.C:
	case <-ctx.Done():
		runErr = ctx.Err()
	case err := <-errs:
		if err == nil {
			err = errors.New("minclient: a connection ended before the deadline")
		}
		runErr = err
	}
	elapsed := time.Since(start)
	var res Result
	for _, c := range conns {
		res.Replies += c.replies.Load()
		res.Unmatched += c.unmatched.Load()
	}
	close(stop)
	for _, c := range conns {
		c.close() // ends the readers
	}
	wg.Wait()
	res.Elapsed = elapsed
	res.ReqPerS = float64(res.Replies) / elapsed.Seconds()
	if cfg.Timed {
		rtts := conns[0].rtts // the reader has stopped: wg.Wait
		slices.Sort(rtts)
		if len(rtts) > 0 {
			res.P50, res.Timed = rtts[(len(rtts)-1)/2], len(rtts)
		}
	}
	return res, runErr
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// requestParts splits the request frame around its id, which is the only
// part that changes from one request to the next.
func requestParts(method, params string) (prefix, suffix []byte) {
	prefix = []byte(`{"jsonrpc":"2.0","method":` + strconv.Quote(method))
	if params != "" {
		prefix = append(prefix, `,"params":`+params...)
	}
	prefix = append(prefix, `,"id":`...)
	return prefix, []byte("}")
}

// conn is one connection: a writer that sends as many requests as it has
// credits for in one write, and a reader that matches replies and returns
// their credits.
type conn struct {
	nc     net.Conn
	ws     *websocket.Conn // nil for TCP
	prefix []byte
	suffix []byte

	mu      sync.Mutex
	pending map[uint64]struct{}

	credits atomic.Int64  // requests the writer may send now
	wake    chan struct{} // capacity 1: the writer has credits to look at
	next    uint64        // last id sent (writer only)

	replies   atomic.Uint64
	unmatched atomic.Uint64
	closeOnce sync.Once
	mask      uint32 // WebSocket mask key state (writer only)

	// With Config.Timed: when the one request in flight was written (by
	// the writer), and the round trips (appended by the reader, up to
	// their capacity).
	sentAt time.Time
	sentMu sync.Mutex
	rtts   []time.Duration
}

func dial(ctx context.Context, u *url.URL) (*conn, error) {
	c := &conn{pending: map[uint64]struct{}{}, wake: make(chan struct{}, 1), mask: 0x9e3779b9}
	switch u.Scheme {
	case "tcp":
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return nil, fmt.Errorf("minclient: %w", err)
		}
		c.nc = nc
	case "ws":
		d := websocket.Dialer{ReadBufferSize: 64 << 10, WriteBufferSize: 4 << 10, HandshakeTimeout: 10 * time.Second}
		ws, _, err := d.DialContext(ctx, u.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("minclient: %w", err)
		}
		// Our own writes go straight to the socket; gorilla must never
		// write between them, so pings are not answered (the reference
		// server sends none).
		ws.SetPingHandler(func(string) error { return nil })
		c.ws, c.nc = ws, ws.NetConn()
	default:
		return nil, fmt.Errorf("minclient: scheme %q: want tcp or ws", u.Scheme)
	}
	return c, nil
}

func (c *conn) close() {
	c.closeOnce.Do(func() { _ = c.nc.Close() })
}

// signal wakes the writer unless it is already due to wake.
func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop sends one request per credit, all that are available in one
// write, until stop.
func (c *conn) writeLoop(stop <-chan struct{}) error {
	var buf, frame []byte
	for {
		select {
		case <-stop:
			return nil
		case <-c.wake:
		}
		n := c.credits.Swap(0)
		if n == 0 {
			continue
		}
		first := c.next + 1
		c.next += uint64(n)
		c.mu.Lock()
		for id := first; id <= c.next; id++ {
			c.pending[id] = struct{}{}
		}
		c.mu.Unlock()
		buf = buf[:0]
		for id := first; id <= c.next; id++ {
			frame = append(frame[:0], c.prefix...)
			frame = strconv.AppendUint(frame, id, 10)
			frame = append(frame, c.suffix...)
			if c.ws == nil {
				buf = append(append(buf, frame...), '\n')
			} else {
				buf = c.appendWSFrame(buf, frame)
			}
		}
		if c.rtts != nil {
			c.sentMu.Lock()
			c.sentAt = time.Now()
			c.sentMu.Unlock()
		}
		if _, err := c.nc.Write(buf); err != nil {
			select {
			case <-stop:
				return nil // closed at the end of the run
			default:
				return fmt.Errorf("minclient: write: %w", err)
			}
		}
	}
}

// appendWSFrame appends a masked text frame carrying payload (RFC 6455
// 5.2; a client must mask every frame).
func (c *conn) appendWSFrame(dst, payload []byte) []byte {
	dst = append(dst, 0x80|0x1) // FIN, text
	n := len(payload)
	switch {
	case n < 126:
		dst = append(dst, 0x80|byte(n))
	case n <= 0xFFFF:
		dst = append(dst, 0x80|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	// A new key per frame from a xorshift: unpredictable enough for a
	// benchmark on loopback, and free.
	c.mask ^= c.mask << 13
	c.mask ^= c.mask >> 17
	c.mask ^= c.mask << 5
	var key [4]byte
	binary.BigEndian.PutUint32(key[:], c.mask)
	dst = append(dst, key[:]...)
	at := len(dst)
	dst = append(dst, payload...)
	for i := range dst[at:] {
		dst[at+i] ^= key[i&3]
	}
	return dst
}

// readLoop matches replies until the connection closes.
func (c *conn) readLoop() error {
	if c.ws != nil {
		return c.readWS()
	}
	br := bufio.NewReaderSize(c.nc, 64<<10)
	ids := make([]uint64, 0, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return readEnd(err)
		}
		ids = append(ids, parseID(line))
		// Settle everything already read in one go: one lock and one
		// wake-up for many replies, as the writer sends many per write.
		if br.Buffered() == 0 || len(ids) == cap(ids) {
			c.settle(ids)
			ids = ids[:0]
		}
	}
}

func (c *conn) readWS() error {
	buf := make([]byte, 0, 4096)
	ids := make([]uint64, 1)
	for {
		_, r, err := c.ws.NextReader()
		if err != nil {
			return readEnd(err)
		}
		buf = buf[:0]
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				return readEnd(err)
			}
		}
		ids[0] = parseID(buf)
		c.settle(ids)
	}
}

// readEnd turns the error that ended a reader into the run's error: a
// connection closed by Run is the normal end.
func readEnd(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return nil
	}
	return fmt.Errorf("minclient: read: %w", err)
}

// settle removes the replies' ids from the pending map, counts them and
// gives their credits back to the writer.
func (c *conn) settle(ids []uint64) {
	if c.rtts != nil && len(c.rtts) < cap(c.rtts) {
		c.sentMu.Lock()
		c.rtts = append(c.rtts, time.Since(c.sentAt))
		c.sentMu.Unlock()
	}
	var matched uint64
	c.mu.Lock()
	for _, id := range ids {
		if _, ok := c.pending[id]; ok {
			delete(c.pending, id)
			matched++
		}
	}
	c.mu.Unlock()
	c.replies.Add(matched)
	c.unmatched.Add(uint64(len(ids)) - matched)
	// A reply that matched nothing still frees a slot: the budget counts
	// messages, and the run should not stall on a broken server.
	c.credits.Add(int64(len(ids)))
	c.signal()
}

var idKey = []byte(`"id":`)

// parseID reads the number after the first "id": of a reply; 0 when there
// is none (0 is never sent, so it matches nothing).
func parseID(b []byte) uint64 {
	i := bytes.Index(b, idKey)
	if i < 0 {
		return 0
	}
	var n uint64
	for _, ch := range b[i+len(idKey):] {
		if ch < '0' || ch > '9' {
			break
		}
		n = n*10 + uint64(ch-'0')
	}
	return n
}
