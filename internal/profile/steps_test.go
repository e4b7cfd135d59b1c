package profile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

var (
	errFakeSilence = errors.New("no reply in time")
	errFakeBroken  = errors.New("broken pipe")
)

// fakeConn is a StepConn that records what is written and answers each
// control request with the next of its replies, keyed by method.
type fakeConn struct {
	seq     int
	sent    []string
	replies map[string]string // method: the reply ("%ID%" stands for the id); absent: silence
	failOn  string            // method whose write fails
}

func (c *fakeConn) ControlID(dst []byte) []byte {
	c.seq++
	return append(dst, `"ctl-`+strconv.Itoa(c.seq)+`"`...)
}

func (c *fakeConn) Send(msg []byte) error {
	c.sent = append(c.sent, string(msg))
	if c.failOn != "" && strings.Contains(string(msg), `"method":"`+c.failOn+`"`) {
		return errFakeBroken
	}
	return nil
}

func (c *fakeConn) Call(id, msg []byte) ([]byte, error) {
	if err := c.Send(msg); err != nil {
		return nil, err
	}
	var m wire.Message
	wire.Scan(msg, &m)
	if string(m.ID) != string(id) {
		return nil, errors.New("the request does not carry its control id")
	}
	name, _ := wire.Unquote(nil, m.Method)
	rep, ok := c.replies[string(name)]
	if !ok {
		return nil, errFakeSilence
	}
	return []byte(strings.ReplaceAll(rep, "%ID%", string(id))), nil
}

func TestRunSteps(t *testing.T) {
	toModern := func(m *wire.Message, era Era) (Era, error) {
		if m.Kind != wire.KindResult {
			return era, errors.New("refused")
		}
		return EraModern, nil
	}
	steps := []Step{
		{Method: "a", Params: []byte(`{"x":1}`), Accept: toModern},
		{Method: "n", Notification: true},
		{Method: "b"},
	}
	tests := []struct {
		name    string
		replies map[string]string
		failOn  string
		wantEra Era
		wantErr string
		sent    []string
	}{
		{
			name:    "all answered",
			replies: map[string]string{"a": `{"jsonrpc":"2.0","id":%ID%,"result":{}}`, "b": `{"jsonrpc":"2.0","id":%ID%,"result":1}`},
			wantEra: EraModern,
			sent: []string{
				`{"jsonrpc":"2.0","id":"ctl-1","method":"a","params":{"x":1}}`,
				`{"jsonrpc":"2.0","method":"n"}`,
				`{"jsonrpc":"2.0","id":"ctl-2","method":"b"}`,
			},
		},
		{
			name:    "refused by Accept: its error as it is",
			replies: map[string]string{"a": `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-1,"message":"m"}}`},
			wantEra: EraLegacy, wantErr: "refused",
			sent: []string{`{"jsonrpc":"2.0","id":"ctl-1","method":"a","params":{"x":1}}`},
		},
		{
			name:    "silence",
			replies: map[string]string{"a": `{"jsonrpc":"2.0","id":%ID%,"result":{}}`},
			wantEra: EraModern, wantErr: "b: no reply in time",
			sent: []string{
				`{"jsonrpc":"2.0","id":"ctl-1","method":"a","params":{"x":1}}`,
				`{"jsonrpc":"2.0","method":"n"}`,
				`{"jsonrpc":"2.0","id":"ctl-2","method":"b"}`,
			},
		},
		{
			name:    "a notification's write fails",
			replies: map[string]string{"a": `{"jsonrpc":"2.0","id":%ID%,"result":{}}`},
			failOn:  "n",
			wantEra: EraModern, wantErr: "n: broken pipe",
			sent: []string{
				`{"jsonrpc":"2.0","id":"ctl-1","method":"a","params":{"x":1}}`,
				`{"jsonrpc":"2.0","method":"n"}`,
			},
		},
	}
	for _, tc := range tests {
		c := &fakeConn{replies: tc.replies, failOn: tc.failOn}
		era, err := RunSteps(c, steps, EraLegacy)
		if era != tc.wantEra || errString(err) != tc.wantErr {
			t.Errorf("%s: era %s, error %v; want %s, %q", tc.name, era, err, tc.wantEra, tc.wantErr)
		}
		if strings.Join(c.sent, "\n") != strings.Join(tc.sent, "\n") {
			t.Errorf("%s: sent\n%s\nwant\n%s", tc.name, strings.Join(c.sent, "\n"), strings.Join(tc.sent, "\n"))
		}
	}
}

// eraConn is a fakeConn that is told the era (EraConn) and records the
// era each message went out under.
type eraConn struct {
	fakeConn
	era  Era
	eras []Era
}

func (c *eraConn) SetEra(e Era) { c.era = e }

func (c *eraConn) Send(msg []byte) error {
	c.eras = append(c.eras, c.era)
	return c.fakeConn.Send(msg)
}

func (c *eraConn) Call(id, msg []byte) ([]byte, error) {
	c.eras = append(c.eras, c.era)
	return c.fakeConn.Call(id, msg)
}

// TestRunStepsTellsTheEra: an EraConn sends each step under the era it
// runs under, the one an earlier Accept chose, and holds the era RunSteps
// returns at the end.
func TestRunStepsTellsTheEra(t *testing.T) {
	toModern := func(m *wire.Message, era Era) (Era, error) {
		if m.Kind != wire.KindResult {
			return era, errors.New("refused")
		}
		return EraModern, nil
	}
	steps := []Step{
		{Method: "a", Accept: toModern},
		{Method: "n", Notification: true},
		{Method: "b", Accept: func(_ *wire.Message, era Era) (Era, error) { return era, nil }},
	}
	tests := []struct {
		name     string
		replies  map[string]string
		wantEras []Era
		wantEnd  Era
	}{
		{
			name:     "an Accept changes the era",
			replies:  map[string]string{"a": `{"jsonrpc":"2.0","id":%ID%,"result":{}}`, "b": `{"jsonrpc":"2.0","id":%ID%,"result":1}`},
			wantEras: []Era{EraLegacy, EraModern, EraModern}, wantEnd: EraModern,
		},
		{
			name:     "refused by Accept",
			replies:  map[string]string{"a": `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-1,"message":"m"}}`},
			wantEras: []Era{EraLegacy}, wantEnd: EraLegacy,
		},
	}
	for _, tc := range tests {
		c := &eraConn{fakeConn: fakeConn{replies: tc.replies}}
		era, _ := RunSteps(c, steps, EraLegacy)
		if fmt.Sprint(c.eras) != fmt.Sprint(tc.wantEras) || c.era != tc.wantEnd || era != tc.wantEnd {
			t.Errorf("%s: messages sent under %v, connection left at %s, RunSteps returned %s; want %v and %s", tc.name, c.eras, c.era, era, tc.wantEras, tc.wantEnd)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestHandshake(t *testing.T) {
	mcp := mustNew(t, MCP, Options{})
	lsp := mustNew(t, LSP, Options{})
	discoverModern := `{"jsonrpc":"2.0","id":%ID%,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	initialized := `{"jsonrpc":"2.0","id":%ID%,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	open := []Step{{Method: "textDocument/didOpen", Params: []byte(`{}`), Notification: true}}
	tests := []struct {
		name    string
		h       Handshake
		replies map[string]string
		failOn  string
		wantEra Era
		wantErr string
		methods string // the methods sent, in order
	}{
		{name: "auto, modern server", h: Handshake{Profile: mcp, Era: EraAuto},
			replies: map[string]string{"server/discover": discoverModern},
			wantEra: EraModern, methods: "server/discover"},
		{name: "auto, silent probe: legacy", h: Handshake{Profile: mcp, Era: EraAuto},
			replies: map[string]string{"initialize": initialized},
			wantEra: EraLegacy20250618, methods: "server/discover initialize notifications/initialized"},
		{name: "auto, probe write fails", h: Handshake{Profile: mcp, Era: EraAuto}, failOn: "server/discover",
			wantEra: EraAuto, wantErr: "MCP era probe: server/discover: broken pipe", methods: "server/discover"},
		{name: "known modern: no probe", h: Handshake{Profile: mcp, Era: EraModern}, wantEra: EraModern},
		{name: "known modern, reprobe: silence is no error", h: Handshake{Profile: mcp, Era: EraModern, Reprobe: true},
			wantEra: EraModern, methods: "server/discover"},
		{name: "known modern, reprobe: its reply is not read", h: Handshake{Profile: mcp, Era: EraModern, Reprobe: true},
			replies: map[string]string{"server/discover": `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32601,"message":"m"}}`},
			wantEra: EraModern, methods: "server/discover"},
		{name: "known modern, reprobe fails", h: Handshake{Profile: mcp, Era: EraModern, Reprobe: true}, failOn: "server/discover",
			wantEra: EraModern, wantErr: "MCP era probe: server/discover: broken pipe", methods: "server/discover"},
		{name: "known legacy, reprobe: none", h: Handshake{Profile: mcp, Era: EraLegacy, Reprobe: true},
			replies: map[string]string{"initialize": initialized},
			wantEra: EraLegacy20250618, methods: "initialize notifications/initialized"},
		{name: "legacy, initialize unanswered", h: Handshake{Profile: mcp, Era: EraLegacy},
			wantEra: EraLegacy, wantErr: "mcp handshake: initialize: no reply in time", methods: "initialize"},
		{name: "lsp with opening steps", h: Handshake{Profile: lsp, Era: EraNone, Open: open},
			replies: map[string]string{"initialize": `{"jsonrpc":"2.0","id":%ID%,"result":{"capabilities":{}}}`},
			wantEra: EraNone, methods: "initialize initialized textDocument/didOpen"},
		{name: "lsp, initialized fails", h: Handshake{Profile: lsp, Era: EraNone, Open: open}, failOn: "initialized",
			replies: map[string]string{"initialize": `{"jsonrpc":"2.0","id":%ID%,"result":{"capabilities":{}}}`},
			wantEra: EraNone, wantErr: "lsp handshake: initialized: broken pipe", methods: "initialize initialized"},
		{name: "jsonrpc: nothing", h: Handshake{Profile: mustNew(t, JSONRPC, Options{}), Era: EraNone}, wantEra: EraNone},
	}
	for _, tc := range tests {
		tc.h.NoReply = errFakeSilence
		c := &fakeConn{replies: tc.replies, failOn: tc.failOn}
		era, err := tc.h.Run(c)
		if era != tc.wantEra || errString(err) != tc.wantErr {
			t.Errorf("%s: era %s, error %v; want %s, %q", tc.name, era, err, tc.wantEra, tc.wantErr)
		}
		var methods []string
		for _, msg := range c.sent {
			var m wire.Message
			wire.Scan([]byte(msg), &m)
			name, _ := wire.Unquote(nil, m.Method)
			methods = append(methods, string(name))
		}
		if got := strings.Join(methods, " "); got != tc.methods {
			t.Errorf("%s: sent %q; want %q", tc.name, got, tc.methods)
		}
	}
}
