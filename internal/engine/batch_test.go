package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/workload"
)

func TestBatchesAgainstReferenceServer(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, url := range []string{tcpURL, httpURL} {
		t.Run(url[:4], func(t *testing.T) {
			cfg := baseConfig(target(t, url))
			cfg.Rate, cfg.Batch, cfg.NotifyEvery = 500, 10, 7
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if len(res.Violations) != 0 {
				t.Fatalf("violations %v %v", res.Violations, res.ViolationSamples)
			}
			// 100 batches of 10 elements; every 7th element a notification.
			if q.Messages != 100 || q.Sent+q.Notifications != 1000 || q.Notifications != 142 || q.OK != q.Sent {
				t.Fatalf("requests %+v", q)
			}
		})
	}
}

// lineServer serves newline-delimited JSON on loopback: for every line it
// receives it writes what reply returns (nothing when it returns nil).
func lineServer(t *testing.T, reply func(line []byte) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					if out := reply(sc.Bytes()); out != nil {
						if _, err := c.Write(out); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return "tcp://" + ln.Addr().String()
}

// emptyBatchAnswer is JSON-RPC's answer to [].
const emptyBatchAnswer = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}`

// batchServer answers newline-delimited batches the way answer says, given
// each request's correct reply, and the empty batch with emptyBatchAnswer.
func batchServer(t *testing.T, answer func(replies []json.RawMessage) any) string {
	return batchServerEmpty(t, answer, emptyBatchAnswer)
}

// batchServerEmpty is batchServer answering [] with empty ("" = silence).
func batchServerEmpty(t *testing.T, answer func(replies []json.RawMessage) any, empty string) string {
	return lineServer(t, func(line []byte) []byte {
		if string(line) == "[]" {
			if empty == "" {
				return nil
			}
			return []byte(empty + "\n")
		}
		var reqs []struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &reqs) != nil {
			return nil
		}
		var replies []json.RawMessage
		for _, r := range reqs {
			if r.ID != nil {
				replies = append(replies, json.RawMessage(`{"jsonrpc":"2.0","id":`+string(r.ID)+`,"result":true}`))
			}
		}
		out, _ := json.Marshal(answer(replies))
		return append(out, '\n')
	})
}

// TestBatchReplyRules: each fault in a reply array gets one rule (the most
// specific) and each request one fate, as the table in README.md says:
// a duplicate is duplicate_reply only; a reply with an id never sent or id
// null goes to the request of the batch left without a reply (answered,
// invalid; not also missing); with none left, it answers a notification
// when the batch had one (whatever its id), else id null is
// unexpected_null_id and an id batch_extra_reply.
func TestBatchReplyRules(t *testing.T) {
	extra := func(reply string) func([]json.RawMessage) any {
		return func(r []json.RawMessage) any { return append(r, json.RawMessage(reply)) }
	}
	instead := func(reply string) func([]json.RawMessage) any {
		return func(r []json.RawMessage) any { r[1] = json.RawMessage(reply); return r }
	}
	const (
		madeUp = `{"jsonrpc":"2.0","id":999999,"result":true}`
		null   = `{"jsonrpc":"2.0","id":null,"result":true}`
		noID   = `{"jsonrpc":"2.0","result":true}`
	)
	type fates struct{ ok, invalid, timeouts uint64 }
	tests := []struct {
		name   string
		notify bool // every 4th element a notification: 3 requests a batch
		answer func([]json.RawMessage) any
		want   map[string]uint64 // violations, per 20 batches of 4
		fates  fates
	}{
		{"reversed order is legal", false, func(r []json.RawMessage) any {
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return r
		}, map[string]uint64{}, fates{ok: 80}},
		{"one missing", false, func(r []json.RawMessage) any { return r[1:] }, map[string]uint64{"batch_missing_reply": 20}, fates{ok: 60, timeouts: 20}},
		{"one extra", false, extra(madeUp), map[string]uint64{"batch_extra_reply": 20}, fates{ok: 80}},
		{"one duplicate", false, func(r []json.RawMessage) any { return append(r, r[0]) }, map[string]uint64{"duplicate_reply": 20}, fates{ok: 80}},
		{"an id changed", false, instead(madeUp), map[string]uint64{"unknown_id": 20}, fates{ok: 60, invalid: 20}},
		{"an id null instead", false, instead(null), map[string]uint64{"unexpected_null_id": 20}, fates{ok: 60, invalid: 20}},
		{"an id dropped", false, instead(noID), map[string]uint64{"invalid_envelope": 20}, fates{ok: 60, invalid: 20}},
		{"an id null too many", false, extra(null), map[string]uint64{"unexpected_null_id": 20}, fates{ok: 80}},
		{"no id too many", false, extra(noID), map[string]uint64{"invalid_envelope": 20}, fates{ok: 80}},
		{"notification answered with a made-up id", true, extra(madeUp), map[string]uint64{"reply_to_notification": 20}, fates{ok: 60}},
		{"notification answered with id null", true, extra(null), map[string]uint64{"reply_to_notification": 20}, fates{ok: 60}},
		{"notification answered without an id", true, extra(noID), map[string]uint64{"reply_to_notification": 20}, fates{ok: 60}},
		{"notification answered with an id of a wrong type", true, extra(`{"jsonrpc":"2.0","id":true,"result":true}`), map[string]uint64{"invalid_envelope": 20}, fates{ok: 60}},
		{"not an array", false, func(r []json.RawMessage) any {
			return json.RawMessage(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no batches"}}`)
		}, map[string]uint64{"batch_not_array": 20}, fates{timeouts: 80}},
		{"answered one by one", false, func(r []json.RawMessage) any { return r[0] }, map[string]uint64{"batch_not_array": 20}, fates{ok: 20, timeouts: 60}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, batchServer(t, tc.answer)))
			cfg.Rate, cfg.Batch, cfg.Duration = 200, 4, 100*time.Millisecond
			// (A second: at 100 ms a reply late on a loaded machine found
			// its requests timed out, and the made-up id beside them was
			// unknown_id, not the notification's reply.)
			cfg.Timeout, cfg.Drain = time.Second, 1500*time.Millisecond
			if tc.notify {
				cfg.NotifyEvery = 4
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests.Messages != 20 {
				t.Fatalf("sent %d batches, want 20", res.Requests.Messages)
			}
			if len(res.Violations) != len(tc.want) {
				t.Fatalf("violations %v, want %v", res.Violations, tc.want)
			}
			for rule, n := range tc.want {
				if res.Violations[rule] != n {
					t.Errorf("violations %v, want %v", res.Violations, tc.want)
				}
			}
			q := res.Requests
			if got := (fates{q.OK, q.InvalidReplies, q.Timeouts}); got != tc.fates || q.Sent != q.Answered+q.Timeouts+q.Leaked+q.TransportErrors {
				t.Errorf("requests %+v: want %+v, each request one fate", q, tc.fates)
			}
		})
	}
}

// TestEmptyBatchProbe: a run that sends batches first sends [] and counts
// empty_batch_reply_wrong unless the reply is one -32600 error with id null.
func TestEmptyBatchProbe(t *testing.T) {
	same := func(r []json.RawMessage) any { return r }
	tests := []struct {
		name, empty string
		want        uint64
	}{
		{"right", emptyBatchAnswer, 0},
		{"an empty array", "[]", 1},
		{"another code", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, 1},
		{"an array holding the error", "[" + emptyBatchAnswer + "]", 1},
		{"silence", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, batchServerEmpty(t, same, tc.empty)))
			cfg.Rate, cfg.Batch, cfg.Duration = 200, 4, 50*time.Millisecond
			cfg.Timeout, cfg.Drain = 200*time.Millisecond, 300*time.Millisecond
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Violations["empty_batch_reply_wrong"]; got != tc.want || len(res.Violations) != int(tc.want) {
				t.Fatalf("violations %v, want empty_batch_reply_wrong %d and nothing else", res.Violations, tc.want)
			}
			if res.Requests.Messages != 10 || res.Requests.OK != 40 {
				t.Errorf("requests %+v: the probe must not count as a message or a request", res.Requests)
			}
		})
	}
}

// TestServerMessagesCountedByMethod: requests and notifications from the
// server are legal JSON-RPC; they are counted by method, never taken for
// replies and never flagged, and every request is answered (-32601 from the
// jsonrpc profile, which implements no client method).
func TestServerMessagesCountedByMethod(t *testing.T) {
	var answers atomic.Int64
	allAnswered := make(chan struct{})
	url := lineServer(t, func(line []byte) []byte {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(line, &msg)
		if msg.Method == nil {
			if string(msg.ID) == `"srv-1"` && msg.Error != nil && msg.Error.Code == -32601 {
				if answers.Add(1) == 500 {
					close(allAnswered)
				}
			}
			return nil
		}
		return []byte(`{"jsonrpc":"2.0","method":"progress","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":"srv-1","method":"workspace/configuration","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":true}` + "\n")
	})
	cfg := baseConfig(target(t, url))
	cfg.Duration = 100 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Requests
	if len(res.Violations) != 0 || q.OK != q.Sent || q.Sent != 500 {
		t.Fatalf("requests %+v violations %v", q, res.Violations)
	}
	want := map[string]uint64{"progress": 500, "workspace/configuration": 500}
	if q.ServerMessages != 1000 || len(res.ServerMethods) != 2 || res.ServerMethods["progress"] != 500 || res.ServerMethods["workspace/configuration"] != 500 {
		t.Fatalf("server messages %d by method %v, want %v", q.ServerMessages, res.ServerMethods, want)
	}
	if res.Profile.ServerRequestsAnswered != 500 {
		t.Errorf("answered %d server requests, want 500", res.Profile.ServerRequestsAnswered)
	}
	// The answers are written before the connection closes at the end of
	// the run; the server may still be reading them.
	select {
	case <-allAnswered:
	case <-time.After(10 * time.Second):
		t.Errorf("the server got %d answers (-32601 to srv-1), want 500", answers.Load())
	}
}

// TestBatchConcurrency: in closed loop the concurrency counts requests, and
// batches fill it in whole batches: 32 in batches of 5 keep 6 batches, 30
// requests, in flight (over streams the credits are split over the
// connections in whole batches, not 8 a connection of which 5 are usable),
// and the report says why the other 2 stay idle. Every request sleeps long
// enough on the server for all of them to be sent before the first reply.
func TestBatchConcurrency(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, tc := range []struct {
		url   string
		conns int
	}{{tcpURL, 4}, {httpURL, 8}} {
		t.Run(tc.url[:4], func(t *testing.T) {
			cfg := baseConfig(target(t, tc.url))
			cfg.Rate, cfg.Concurrency, cfg.Batch, cfg.Conns = 0, 32, 5, tc.conns
			cfg.Method, cfg.Params = "sleep", []byte(`[1000]`)
			cfg.Duration, cfg.Timeout, cfg.Drain = 200*time.Millisecond, 5*time.Second, 5*time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if res.InFlightMax != 30 || q.Sent != 30 || q.Messages != 6 || q.Batches != 6 || q.OK != 30 {
				t.Errorf("in flight max %d, requests %+v; want 30 requests in 6 batches in flight", res.InFlightMax, q)
			}
			want := "--concurrency 32 is not a multiple of --batch 5: a batch is sent only when 5 more requests may be in flight, so at most 30 requests (6 batches) were in flight at once"
			if !slices.Contains(res.Warnings, want) {
				t.Errorf("warnings %q lack %q", res.Warnings, want)
			}
		})
	}
}

// TestBatchResultEqualsParams: each element of a batch draws params of its
// own, and its reply is held against those params, not the first
// element's: a correct echo server breaks no expectation (issue 15, item 1).
func TestBatchResultEqualsParams(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, tc := range []struct{ name, url string }{
		{"tcp", tcpURL},
		{"http", httpURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, tc.url))
			cfg.Calls = []workload.Call{{Name: "echo", Method: "echo", Params: counterParams{}, Batch: 2, Expect: workload.Expect{ResultEqualsParams: true}}}
			cfg.Rate, cfg.Duration = 500, 200*time.Millisecond
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if q := res.Requests; q.Messages != 100 || q.OK != q.Sent || q.Sent == 0 || len(res.Violations) != 0 {
				t.Fatalf("requests %+v violations %v %v", q, res.Violations, res.ViolationSamples)
			}
		})
	}
}
