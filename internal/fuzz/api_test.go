package fuzz

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/mutate"
)

// testAPI has a plain method with a params and a result schema, an
// idempotent one, and an MCP tool with an output schema.
func testAPI(t *testing.T) *apiRules {
	t.Helper()
	api, err := apispec.FromOpenRPC([]byte(`{"methods": [
	  {"name": "countdown", "paramStructure": "by-name",
	   "params": [{"name": "n", "required": true, "schema": {"type": "integer", "minimum": -5, "maximum": 10}}],
	   "result": {"name": "r", "schema": {"type": "array", "items": {"type": "integer"}}}},
	  {"name": "now", "params": [], "x-idempotent": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := apispec.FromMCP([]byte(`{"tools": [{"name": "search",
	  "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
	  "outputSchema": {"type": "object", "required": ["hits"]}}]}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Merge(tools); err != nil {
		t.Fatal(err)
	}
	return &apiRules{api: api, codes: []int64{invalidParamsCode}}
}

// TestAPIOracles: each oracle of the API fires on its case and on nothing
// else, on a stream and over HTTP alike; the verdict names the method, and
// the dedup key is the rule and the method.
func TestAPIOracles(t *testing.T) {
	api := testAPI(t)
	const (
		cd         = `{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":3}}`
		cdBad      = `{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":11}}`
		now        = `{"jsonrpc":"2.0","id":1,"method":"now"}`
		now2       = `{"jsonrpc":"2.0","id":2,"method":"now"}`
		search     = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":""}}}`
		searchBad  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":1}}}`
		res1       = `{"jsonrpc":"2.0","id":1,"result":[3,2,1,0]}`
		resBad     = `{"jsonrpc":"2.0","id":1,"result":["3"]}`
		err32602   = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"n out of range"}}`
		err32600   = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"bad"}}`
		err32603   = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`
		toolOK     = `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"hits":[]}}}`
		toolNoSC   = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
		toolErr    = `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`
		nowA, nowB = `{"jsonrpc":"2.0","id":1,"result":"12:00"}`, `{"jsonrpc":"2.0","id":2,"result":"12:01"}`
		nowB2      = `{"jsonrpc":"2.0","id":2,"result":"12:00"}`
	)
	for _, tc := range []struct {
		name    string
		c       mutate.Case
		replies []string
		rule    string
	}{
		{"valid call, good result", frames(cd), []string{res1}, ""},
		{"valid call, result breaks its schema", frames(cd), []string{resBad}, "result_schema_mismatch"},
		{"valid call refused with -32602", frames(cd), []string{err32602}, "valid_params_rejected"},
		{"valid call answered -32603", frames(cd), []string{err32603}, "internal_error"},
		{"invalid call refused with -32602", frames(cdBad), []string{err32602}, ""},
		{"invalid call refused with another code", frames(cdBad), []string{err32600}, "params_error_code"},
		{"invalid call answered", frames(cdBad), []string{res1}, "invalid_params_accepted"},
		{"invalid call, the result's schema not judged", frames(cdBad), []string{resBad}, "invalid_params_accepted"},
		{"params written twice: not judged", frames(`{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":3,"n":11}}`), []string{res1}, ""},
		{"a number with an exponent: not judged", frames(`{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":1.1e1}}`), []string{res1}, ""},
		{"another envelope member: not judged", frames(`{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":11},"result":[]}`), []string{err32600}, ""},
		{"method written twice: not judged", frames(`{"jsonrpc":"2.0","id":1,"method":"countdown","method":"x","params":{"n":11}}`), []string{res1}, ""},
		{"id null: not judged", frames(`{"jsonrpc":"2.0","id":null,"method":"countdown","params":{"n":11}}`, `{"jsonrpc":"2.0","method":"","params":0}`),
			[]string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad"}}`}, ""},
		{"another frame has the id: not judged", frames(cdBad, `{"jsonrpc":"2.0","id":1,"method":"x"}`), []string{res1, err32600}, ""},
		{"idempotent: equal results", frames(now, now2), []string{nowA, nowB2}, ""},
		{"idempotent: different results", frames(now, now2), []string{nowA, nowB}, "idempotent_mismatch"},
		{"tool: valid, structured", frames(search), []string{toolOK}, ""},
		{"tool: valid, no structuredContent", frames(search), []string{toolNoSC}, "result_schema_mismatch"},
		{"tool: valid, a tool error", frames(search), []string{toolErr}, ""},
		{"tool: invalid, a tool error", frames(searchBad), []string{toolErr}, ""},
		{"tool: invalid, answered", frames(searchBad), []string{toolOK}, "invalid_params_accepted"},
		{"unknown tool: not judged", frames(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other","arguments":{}}}`), []string{toolOK}, ""},
	} {
		for _, http := range []bool{false, true} {
			name := tc.name
			o := outcome{}
			if http {
				name += "/http"
				o = outcome{perFrame: true, sent: len(tc.c.Frames), httpStatus: make([]int, len(tc.c.Frames)), frameReplies: make([][][]byte, len(tc.c.Frames))}
				for i := range tc.c.Frames {
					o.httpStatus[i] = 200
					o.frameReplies[i] = [][]byte{[]byte(tc.replies[i])}
				}
			} else {
				for _, r := range tc.replies {
					o.replies = append(o.replies, []byte(r))
				}
			}
			t.Run(name, func(t *testing.T) {
				infos, _ := inspect(tc.c, nil)
				v := judgeExchange(tc.c, infos, &o, nil, api)
				rule := ""
				if v.rules != 0 {
					rule = v.rule.String()
				}
				if rule != tc.rule {
					t.Fatalf("rule %q (%s), want %q", rule, v.note, tc.rule)
				}
				if rule == "" {
					return
				}
				if key := dedupKey(v); !strings.HasPrefix(key, rule+"|"+v.api) || v.api == "" || !strings.HasPrefix(v.note, v.api+": ") {
					t.Errorf("key %q, api %q, note %q: want the rule and the method", key, v.api, v.note)
				}
			})
		}
	}
}

// TestAPICoverageCounts: every call of the API in an exchange is counted
// by what its schema says of its params and by how it was answered.
func TestAPICoverageCounts(t *testing.T) {
	api := testAPI(t)
	c := frames(`{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":3}}`,
		`{"jsonrpc":"2.0","id":2,"method":"countdown","params":{"n":30}}`,
		`{"jsonrpc":"2.0","id":3,"method":"countdown","params":{"n":3,"n":4}}`,
		`{"jsonrpc":"2.0","id":4,"method":"now"}`)
	o := outcome{replies: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":[]}`), []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x"}}`)}, end: endTimeout}
	infos, _ := inspect(c, nil)
	v := judgeExchange(c, infos, &o, nil, api)
	r := &run{api: api}
	w := &worker{r: r}
	w.cover(v.calls)
	r.mergeCoverage(w.cov)
	cov := r.apiCoverage([]Finding{{ID: "hang-x", Method: "countdown"}})
	cd, now := cov.Methods[0], cov.Methods[1]
	if cd.CallsValid != 1 || cd.CallsInvalid != 1 || cd.CallsUnjudged != 0 || cd.Results != 1 || cd.ErrorsByCode["-32602"] != 1 || len(cd.Findings) != 1 {
		t.Errorf("countdown: %+v", cd)
	}
	// (The frame with n twice is not judged at all: it is no call of the
	// API as far as the oracles go, so it is not counted either.)
	if now.NoReply != 1 || now.CallsValid != 1 {
		t.Errorf("now: %+v", now)
	}
	if strings.Join(cov.NeverReached, ",") != "now,tool search" {
		t.Errorf("never reached %q", cov.NeverReached)
	}
}

// TestMinimizeCall: a finding on a call of the API is minimized as a call:
// the envelope's other members dropped, the params shrunk while the
// finding holds, every try a valid call of the same method and id.
func TestMinimizeCall(t *testing.T) {
	api := testAPI(t)
	r := &run{api: api}
	in := frames(`{"jsonrpc":"2.0","extra":[1,2,3],"id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"","limit":[1,2,3,4,5,6,7,8],"other":{"deep":[true]}}}}`)
	var tries int
	hold := func(_ context.Context, c mutate.Case) bool {
		tries++
		f := string(c.Frames[0])
		if !strings.HasPrefix(f, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":`) {
			t.Fatalf("a try that is not the call: %s", f)
		}
		return strings.Contains(f, `"query":""`)
	}
	mini, res, ok := r.minimizeCall(context.Background(), in, hold, 500, time.Time{})
	if !ok {
		t.Fatal("not minimized as a call")
	}
	want := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":""}}}`
	if got := string(mini.Frames[0]); got != want || res.checks != tries || !res.complete {
		t.Errorf("minimized to %s in %d checks (%d tries, complete %v), want %s", got, res.checks, tries, res.complete, want)
	}
	// An input whose call written again no longer fails is left to the
	// byte-level minimizer.
	if _, _, ok := r.minimizeCall(context.Background(), in, func(context.Context, mutate.Case) bool { return false }, 500, time.Time{}); ok {
		t.Error("a call that holds only with its extra member was minimized as a call")
	}
	if _, _, ok := r.minimizeCall(context.Background(), frames(`{"jsonrpc":"2.0","id":1,"method":"x"}`), hold, 500, time.Time{}); ok {
		t.Error("a call of no method of the API was minimized as one")
	}
}

// TestCrashBlamesCall: a crash on an input holding a call of the API that
// no reply answered is keyed by the method, however the input around the
// call was spelled (the frame before it answered with id null, which the
// pairing may give the call); without an API, or when the call was
// answered, the key is the frames' as before.
func TestCrashBlamesCall(t *testing.T) {
	api := testAPI(t)
	call := `{"jsonrpc":"2.0","id":0,"method":"countdown","params":{"n":-3}}`
	nullErr := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`
	for _, tc := range []struct {
		name    string
		c       mutate.Case
		replies []string
		api     *apiRules
		key     string
	}{
		{"the call alone", frames(call), nil, api, "crash|api:countdown|conn_reset"},
		{"after an empty batch", frames(`[]`, call), []string{nullErr}, api, "crash|api:countdown|conn_reset"},
		{"after a parse error", frames(`/`, call), []string{nullErr}, api, "crash|api:countdown|conn_reset"},
		{"the call answered", frames(call, `[]`), []string{`{"jsonrpc":"2.0","id":0,"result":[]}`}, api, "crash|empty_batch|conn_reset"},
		{"no API", frames(call), nil, nil, "crash|call/id:num|conn_reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := outcome{end: endReset, note: "reset"}
			for _, r := range tc.replies {
				o.replies = append(o.replies, []byte(r))
			}
			infos, _ := inspect(tc.c, nil)
			v := judgeExchange(tc.c, infos, &o, nil, tc.api)
			if v.rule.String() != "crash" || dedupKey(v) != tc.key {
				t.Errorf("rule %s key %q, want crash %q", v.rule, dedupKey(v), tc.key)
			}
		})
	}
}

// TestAPICoverageHTTPNoReply: over HTTP, a call whose POST timed out or
// lost its connection was sent and never answered: the coverage counts it
// as no reply, as a stream's exchange does. A run interrupted, or a
// server never reached, sent nothing to count.
func TestAPICoverageHTTPNoReply(t *testing.T) {
	api := testAPI(t)
	c := frames(`{"jsonrpc":"2.0","id":4,"method":"now"}`)
	tests := []struct {
		end     endKind
		noReply uint64
	}{
		{endTimeout, 1},
		{endReset, 1},
		{endClosed, 1},
		{endInterrupted, 0},
		{endUnreachable, 0},
	}
	for _, tt := range tests {
		t.Run(tt.end.String(), func(t *testing.T) {
			o := outcome{frameReplies: [][][]byte{nil}, httpStatus: []int{0}, perFrame: true, sent: 1, end: tt.end, endFrame: 0, note: "x"}
			infos, _ := inspect(c, nil)
			v := judgeExchange(c, infos, &o, nil, api)
			r := &run{api: api}
			w := &worker{r: r}
			w.cover(v.calls)
			r.mergeCoverage(w.cov)
			now := r.apiCoverage(nil).Methods[1]
			if now.NoReply != tt.noReply || now.CallsValid != tt.noReply {
				t.Errorf("now: %+v; want %d call(s) without a reply", now, tt.noReply)
			}
		})
	}
}
