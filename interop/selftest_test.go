package interop

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHarnessSeesViolations proves the harness against a server that breaks
// a rule on purpose: it answers every notification POST with a body, which
// JSON-RPC 2.0 section 4.1 forbids ("The Server MUST NOT reply to a
// Notification"). The run must report exactly reply_to_notification, once
// per notification, and exit 1; a harness that passed here without seeing
// it would also pass a broken real server.
func TestHarnessSeesViolations(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if err != nil || json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if req.ID == nil { // a notification: the rule broken here
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"result":true}`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":true}`)
	})
	hs := httptest.NewUnstartedServer(h)
	lst, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	hs.Listener.Close()
	hs.Listener = lst
	hs.Start()
	defer hs.Close()

	c := loadCase{
		args: []string{hs.URL + "/", "--method", "ping", "--rate", "500", "--duration", "1s",
			"--notify-every", "5", "--conns", "4"},
		notify: true,
		known: []knownViolation{{rule: "reply_to_notification", count: 100,
			why: "section 4.1: the Server MUST NOT reply to a Notification"}},
	}
	c.check(t)
}
