package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeStreamableHTTP is a scripted MCP Streamable HTTP endpoint on loopback.
type fakeStreamableHTTP struct {
	legacy  bool // no server/discover (404 + -32601); initialize hands out a session
	sse     bool // answer tools/call with an SSE stream: keep-alive, a log notification, a ping, the response
	forever bool // answer tools/call with keep-alives only, until the client goes away

	badHeaders, answers, deletes, initialized atomic.Int64
}

func (f *fakeStreamableHTTP) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodDelete {
		f.deletes.Add(1)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.NewDecoder(req.Body).Decode(&m) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	jsonReply := func(status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
	if m.Method == "" { // the client's answer to our ping
		if string(m.ID) == `"ping-1"` && string(m.Result) == "{}" {
			f.answers.Add(1)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if req.Header.Get("Accept") != "application/json, text/event-stream" {
		f.badHeaders.Add(1)
	}
	if f.legacy && m.Method != "initialize" && m.Method != "server/discover" && req.Header.Get("Mcp-Session-Id") != "s1" {
		f.badHeaders.Add(1)
	}
	if !f.legacy && m.Method == "tools/call" && (req.Header.Get("Mcp-Method") != "tools/call" || req.Header.Get("Mcp-Name") != m.Params.Name ||
		req.Header.Get("MCP-Protocol-Version") != "2026-07-28") {
		f.badHeaders.Add(1)
	}
	switch m.Method {
	case "server/discover":
		if f.legacy {
			jsonReply(http.StatusNotFound, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"no such method"}}`)
			return
		}
		jsonReply(http.StatusOK, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`)
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "s1")
		jsonReply(http.StatusOK, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`)
	case "notifications/initialized":
		f.initialized.Add(1)
		w.WriteHeader(http.StatusAccepted)
	case "tools/call":
		response := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[]}}`
		if !f.sse && !f.forever {
			jsonReply(http.StatusOK, response)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		if f.forever {
			for {
				if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
					return
				}
				fl.Flush()
				select {
				case <-req.Context().Done():
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}
		fmt.Fprint(w, "id: prime-1\ndata:\n\n") // the priming event of 2025-11-25: no message
		fmt.Fprint(w, ": keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"ping-1\",\"method\":\"ping\"}\n\n")
		fmt.Fprint(w, "data: "+response+"\n\n")
	case "notifications/refused", "refused":
		http.Error(w, "JSON RPC not handled", http.StatusBadRequest) // as go-sdk v1.8.0 does
	default:
		jsonReply(http.StatusNotFound, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"no such method"}}`)
	}
}

func serveFake(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// TestMCPStreamableHTTP: the era is detected from the HTTP reply to a
// modern probe; modern POSTs carry the MCP headers, legacy ones the
// session; JSON and SSE replies are both read, with the server's
// notifications counted and its ping answered by POST; a legacy session is
// deleted at the end.
func TestMCPStreamableHTTP(t *testing.T) {
	tests := []struct {
		name        string
		srv         *fakeStreamableHTTP
		wantEra     string
		wantDeletes int64
	}{
		{"modern json", &fakeStreamableHTTP{}, "modern", 0},
		{"modern sse", &fakeStreamableHTTP{sse: true}, "modern", 0},
		{"legacy json", &fakeStreamableHTTP{legacy: true}, "legacy", 1},
		{"legacy sse", &fakeStreamableHTTP{legacy: true, sse: true}, "legacy", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, serveFake(t, tc.srv)))
			cfg.Profile = mcpProfile(t, "auto")
			cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"echo","arguments":{}}`)
			cfg.Rate, cfg.Conns, cfg.Duration = 500, 4, 100*time.Millisecond
			cfg.Timeout, cfg.Drain = 5*time.Second, 5*time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if q.Sent != 50 || q.OK != 50 || len(res.Violations) != 0 || q.TransportErrors != 0 {
				t.Fatalf("requests %+v violations %v errors %v", q, res.Violations, res.TransportErrorSamples)
			}
			if n := tc.srv.badHeaders.Load(); n != 0 {
				t.Errorf("%d POSTs lacked the headers of their era", n)
			}
			if res.Profile.Era != tc.wantEra || res.Profile.Handshakes != 1 {
				t.Errorf("profile %+v, want era %s and one session", res.Profile, tc.wantEra)
			}
			if got := tc.srv.deletes.Load(); got != tc.wantDeletes {
				t.Errorf("%d DELETEs of the session, want %d", got, tc.wantDeletes)
			}
			if tc.srv.sse {
				if res.ServerMethods["notifications/message"] != 50 || res.ServerMethods["ping"] != 50 {
					t.Errorf("server methods %v, want 50 notifications/message and 50 ping", res.ServerMethods)
				}
				if res.Profile.ServerRequestsAnswered != 50 || tc.srv.answers.Load() != 50 {
					t.Errorf("answered %d pings, server got %d answers; want 50", res.Profile.ServerRequestsAnswered, tc.srv.answers.Load())
				}
			}
		})
	}
}

// TestMCPSSEThatNeverEnds: a response stream of keep-alives only ends at
// --timeout, counts as a timeout and a cancellation, and the run ends on
// time with its result.
func TestMCPSSEThatNeverEnds(t *testing.T) {
	srv := &fakeStreamableHTTP{forever: true}
	cfg := baseConfig(target(t, serveFake(t, srv)))
	cfg.Profile = mcpProfile(t, "modern")
	cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"echo"}`)
	cfg.Rate, cfg.Conns, cfg.Duration = 100, 8, 100*time.Millisecond
	cfg.Timeout, cfg.Drain = 100*time.Millisecond, time.Second
	start := time.Now()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Requests
	if q.Sent != 10 || q.Timeouts != 10 || res.Profile.CancelsSent != 10 || len(res.Violations) != 0 {
		t.Fatalf("requests %+v cancels %d violations %v; want 10 timeouts, each cancelled", q, res.Profile.CancelsSent, res.Violations)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %v", took)
	}
}

// TestMCPHTTPRefusals: an HTTP error status with a body that is not JSON is
// a refusal, not a malformed reply: for a notification (legal in Streamable
// HTTP) it is a warning, for a request a transport error; neither is a rule
// violation.
func TestMCPHTTPRefusals(t *testing.T) {
	tests := []struct {
		method      string
		notify      int
		wantErrors  uint64
		wantWarning string
	}{
		{"notifications/refused", 1, 0, "refused 50 notifications with an HTTP error status"},
		{"refused", 0, 50, ""},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			cfg := baseConfig(target(t, serveFake(t, &fakeStreamableHTTP{})))
			cfg.Profile = mcpProfile(t, "modern")
			cfg.Method, cfg.Params, cfg.NotifyEvery = tc.method, nil, tc.notify
			cfg.Rate, cfg.Conns, cfg.Duration = 500, 2, 100*time.Millisecond
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Violations) != 0 || res.Requests.TransportErrors != tc.wantErrors {
				t.Fatalf("violations %v, transport errors %d; want none and %d", res.Violations, res.Requests.TransportErrors, tc.wantErrors)
			}
			found := tc.wantWarning == ""
			for _, w := range res.Warnings {
				found = found || strings.Contains(w, tc.wantWarning)
			}
			if !found {
				t.Errorf("warnings %q lack %q", res.Warnings, tc.wantWarning)
			}
		})
	}
}

// handshakeHTTP is a legacy Streamable HTTP endpoint whose handshake
// answers are set per test, and which records the headers each method's
// POSTs (and the DELETE) carried.
type handshakeHTTP struct {
	version           string // the protocolVersion initialize's result chooses
	initStatus        int    // not 0: initialize is answered with it and a text body
	initializedStatus int    // not 0: notifications/initialized likewise

	mu     sync.Mutex
	seen   map[string]string // method: "id=... proto=... session=..." of its first POST
	others int               // POSTs whose headers differ from the first of their method
}

func (f *handshakeHTTP) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	method := req.Method
	if method != http.MethodDelete {
		if json.NewDecoder(req.Body).Decode(&m) != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		method = m.Method
	}
	id := string(m.ID)
	if method == "tools/call" {
		id = "load" // the load's ids are the engine's own
	}
	got := fmt.Sprintf("id=%s proto=%s session=%s", id, req.Header.Get("MCP-Protocol-Version"), req.Header.Get("Mcp-Session-Id"))
	f.mu.Lock()
	if prev, ok := f.seen[method]; !ok {
		f.seen[method] = got
	} else if prev != got {
		f.others++
	}
	f.mu.Unlock()
	reply := func(status int, result string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
	}
	switch method {
	case http.MethodDelete:
	case "initialize":
		if f.initStatus != 0 {
			http.Error(w, "initialize refused", f.initStatus)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		reply(http.StatusOK, `{"protocolVersion":"`+f.version+`","capabilities":{},"serverInfo":{"name":"f","version":"1"}}`)
	case "notifications/initialized":
		if f.initializedStatus != 0 {
			http.Error(w, "initialized refused", f.initializedStatus)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	case "tools/call":
		w.Header().Set("Mcp-Session-Id", "not-a-new-session") // a session is handed out with initialize only
		reply(http.StatusOK, `{"content":[]}`)
	default:
		http.Error(w, "unexpected", http.StatusNotFound)
	}
}

// TestMCPHTTPHandshake: the legacy handshake over Streamable HTTP runs
// through the profile's step runner. initialize goes out with a control id
// and no MCP-Protocol-Version; the revision the server chooses is the one
// every later POST carries (none before 2025-06-18); the session id of
// initialize's response goes on every later request and the DELETE. A
// refused step fails the run with an error naming the step, the status
// and the body.
func TestMCPHTTPHandshake(t *testing.T) {
	tests := []struct {
		name string
		srv  *handshakeHTTP
		want map[string]string // method: what its POSTs carried
		err  string
	}{
		{
			name: "the server chooses 2025-06-18",
			srv:  &handshakeHTTP{version: "2025-06-18"},
			want: map[string]string{
				"initialize":                `id="rpcload-1" proto= session=`,
				"notifications/initialized": `id= proto=2025-06-18 session=s1`,
				"tools/call":                `id=load proto=2025-06-18 session=s1`,
				http.MethodDelete:           `id= proto=2025-06-18 session=s1`,
			},
		},
		{
			name: "the server chooses 2025-03-26, which has no version header",
			srv:  &handshakeHTTP{version: "2025-03-26"},
			want: map[string]string{
				"initialize":                `id="rpcload-1" proto= session=`,
				"notifications/initialized": `id= proto= session=s1`,
				"tools/call":                `id=load proto= session=s1`,
				http.MethodDelete:           `id= proto= session=s1`,
			},
		},
		{
			name: "initialize refused with 403",
			srv:  &handshakeHTTP{initStatus: http.StatusForbidden},
			err:  `mcp handshake: initialize: HTTP 403 "initialize refused\n"`,
		},
		{
			name: "initialize fails with 500",
			srv:  &handshakeHTTP{initStatus: http.StatusInternalServerError},
			err:  `mcp handshake: initialize: HTTP 500 "initialize refused\n"`,
		},
		{
			name: "notifications/initialized refused with 400",
			srv:  &handshakeHTTP{version: "2025-11-25", initializedStatus: http.StatusBadRequest},
			err:  `mcp handshake: notifications/initialized: HTTP 400 "initialized refused\n"`,
		},
		{
			name: "a revision rpcload does not speak",
			srv:  &handshakeHTTP{version: "2099-01-01"},
			err:  `mcp handshake: profile: the server chose MCP revision "2099-01-01", which a legacy client cannot speak`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.seen = map[string]string{}
			cfg := baseConfig(target(t, serveFake(t, tc.srv)))
			cfg.Profile = mcpProfile(t, "legacy")
			cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"echo","arguments":{}}`)
			cfg.Rate, cfg.Conns, cfg.Duration = 100, 1, 50*time.Millisecond
			cfg.Timeout, cfg.Drain = 5*time.Second, 5*time.Second
			res, err := Run(context.Background(), cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q := res.Requests; q.Sent != 5 || q.OK != 5 || len(res.Violations) != 0 {
				t.Fatalf("requests %+v violations %v", q, res.Violations)
			}
			tc.srv.mu.Lock()
			defer tc.srv.mu.Unlock()
			for method, want := range tc.want {
				if got := tc.srv.seen[method]; got != want {
					t.Errorf("%s carried %q, want %q", method, got, want)
				}
			}
			if len(tc.srv.seen) != len(tc.want) || tc.srv.others != 0 {
				t.Errorf("requests seen %v, %d differing from the first of their method; want only %v", tc.srv.seen, tc.srv.others, tc.want)
			}
		})
	}
}
