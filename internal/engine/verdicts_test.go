package engine

import (
	"context"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestReplyToNotificationEveryTransport: a server that answers
// notifications, with id null or with no id member at all, breaks
// reply_to_notification and nothing else, on every transport, alone and
// inside batches (issue 15, item 2).
func TestReplyToNotificationEveryTransport(t *testing.T) {
	for _, fault := range []testsrv.Fault{testsrv.FaultNotifyReply, testsrv.FaultNotifyReplyNoID} {
		srv, targets := allTargets(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: fault, Prob: 1}}})
		for _, scheme := range []string{"tcp", "http", "ws", "tcp+lsp"} {
			for _, batch := range []int{0, 4} {
				name := string(fault) + "/" + scheme + "/alone"
				if batch > 0 {
					name = string(fault) + "/" + scheme + "/batch"
				}
				t.Run(name, func(t *testing.T) {
					before := srv.Injected()[fault]
					cfg := baseConfig(targets[scheme])
					// Alone: every third message a notification, and the last
					// one a request, whose reply comes after the notification's
					// (the run waits for replies to requests only); in a batch
					// of 4, the 4th element: one notification a frame.
					// (One connection: with two, the other's last
					// notification could be answered after the last request,
					// which ends the run, and its reply went unread on a
					// loaded machine.)
					cfg.Batch, cfg.NotifyEvery, cfg.Conns = batch, 3, 1
					if batch > 0 {
						cfg.NotifyEvery, cfg.Rate = 4, 1000
					}
					res, err := Run(context.Background(), cfg)
					if err != nil {
						t.Fatal(err)
					}
					n := srv.Injected()[fault] - before
					q := res.Requests
					if n == 0 || len(res.Violations) != 1 || res.Violations["reply_to_notification"] != n {
						t.Fatalf("violations %v, want reply_to_notification %d alone", res.Violations, n)
					}
					if q.OK != q.Sent || q.Notifications == 0 {
						t.Errorf("requests %+v, want every request ok", q)
					}
				})
			}
		}
	}
}

// TestBrokenEnvelopeIsInvalid: a reply to a request whose envelope is
// broken (jsonrpc missing or wrong, result and error both or neither, a
// bad error object) is counted under its rule and as an invalid reply,
// never as ok, on every transport (issue 15, item 4).
func TestBrokenEnvelopeIsInvalid(t *testing.T) {
	faults := map[testsrv.Fault]string{
		testsrv.FaultBadVersion: "bad_jsonrpc_version", testsrv.FaultBoth: "both_result_and_error",
		testsrv.FaultNeither: "no_result_or_error", testsrv.FaultBadError: "bad_error_object",
	}
	for fault, rule := range faults {
		srv, targets := allTargets(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: fault, Prob: 0.1}}, Seed: 3})
		for _, scheme := range []string{"tcp", "http", "ws"} {
			for _, batch := range []int{0, 4} {
				t.Run(string(fault)+"/"+scheme+"/batch"+string(rune('0'+batch)), func(t *testing.T) {
					before := srv.Injected()[fault]
					cfg := baseConfig(targets[scheme])
					cfg.Batch = batch
					res, err := Run(context.Background(), cfg)
					if err != nil {
						t.Fatal(err)
					}
					n := srv.Injected()[fault] - before
					q := res.Requests
					// The server may break the reply to the empty-batch probe
					// too, which is no request.
					probe := res.Violations["empty_batch_reply_wrong"]
					if n == 0 || uint64(len(res.Violations)) != 1+min(probe, 1) || res.Violations[rule]+probe != n {
						t.Fatalf("violations %v, want %s %d alone", res.Violations, rule, n)
					}
					if n -= probe; q.InvalidReplies != n || q.OK+q.RPCErrors != q.Sent-n {
						t.Errorf("requests %+v, want %d invalid replies and the rest ok", q, n)
					}
				})
			}
		}
	}
}
