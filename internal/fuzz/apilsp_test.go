package fuzz

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// writeFiles writes files (path relative to dir: content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenWorkspace: the documents an LSP run opens are the workspace's
// files of a known language, in lexical order, hidden directories, big
// files and text that is not UTF-8 skipped, eight at most; without a
// workspace (or for another profile) none.
func TestOpenWorkspace(t *testing.T) {
	big := strings.Repeat("x", maxWorkspaceFileBytes+1)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string // paths relative to the workspace
	}{
		{"known languages in lexical order", map[string]string{"b.py": "x = 1\n", "a.go": "package a\n", "sub/c.rs": "fn main() {}\n",
			"README": "readme", "notes.txt": "notes", "go.mod": "module m\n"}, []string{"a.go", "b.py", "sub/c.rs"}},
		{"hidden, big and not UTF-8 skipped", map[string]string{".git/x.go": "package x\n", "big.go": big, "bad.go": "package \xff\n", "ok.go": "package ok\n"},
			[]string{"ok.go"}},
		{"eight at most", map[string]string{"1.go": "", "2.go": "", "3.go": "", "4.go": "", "5.go": "", "6.go": "", "7.go": "", "8.go": "", "9.go": ""},
			[]string{"1.go", "2.go", "3.go", "4.go", "5.go", "6.go", "7.go", "8.go"}},
		{"nothing to open", map[string]string{"notes.txt": "notes"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			docs, err := openWorkspace(&Config{Profile: profile.LSP, ProfileOptions: profile.Options{Workspace: dir}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, f := range docs.files {
				rel, _ := filepath.Rel(dir, strings.TrimPrefix(f.URI, "file://"))
				got = append(got, filepath.ToSlash(rel))
				if want := profile.DidOpen(filepath.Join(dir, rel), f.Text); string(docs.open[i].Params) != string(want.Params) {
					t.Errorf("%s: didOpen %s, want %s", rel, docs.open[i].Params, want.Params)
				}
			}
			if !slices.Equal(got, tc.want) || len(docs.open) != len(docs.files) {
				t.Errorf("opened %q (%d didOpen), want %q", got, len(docs.open), tc.want)
			}
		})
	}
	for _, cfg := range []Config{{Profile: profile.LSP}, {Profile: profile.MCP, ProfileOptions: profile.Options{Workspace: t.TempDir()}}} {
		if docs, err := openWorkspace(&cfg); docs != nil || err != nil {
			t.Errorf("%s, workspace %q: %v %v, want nothing", cfg.Profile, cfg.ProfileOptions.Workspace, docs, err)
		}
	}
	if _, err := openWorkspace(&Config{Profile: profile.LSP, ProfileOptions: profile.Options{Workspace: filepath.Join(t.TempDir(), "gone")}}); err == nil {
		t.Error("a workspace that does not exist: no error")
	}
}

// TestCancelledLater: a call is cancelled by a later $/cancelRequest
// naming its id, or notifications/cancelled naming it as requestId,
// however the id or the member's name is written; not by a cancellation
// before it or of another id.
func TestCancelledLater(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}}`
	lsp := func(params string) string {
		return `{"jsonrpc":"2.0","method":"$/cancelRequest","params":` + params + `}`
	}
	mcp := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}`
	}
	for _, tc := range []struct {
		name   string
		frames []string
		want   bool
	}{
		{"$/cancelRequest", []string{call, lsp(`{"id":7}`)}, true},
		{"notifications/cancelled", []string{call, mcp(`{"requestId":7,"reason":"x"}`)}, true},
		{"the id by value", []string{call, lsp(`{"id":7.0}`)}, true},
		{"an escaped member name", []string{call, lsp(`{"\u0069d":7}`)}, true},
		{"an escaped method name", []string{call, `{"jsonrpc":"2.0","method":"$/cancel\u0052equest","params":{"id":7}}`}, true},
		{"another id", []string{call, lsp(`{"id":8}`)}, false},
		{"the id as a string (a server may read it either way)", []string{call, lsp(`{"id":"7"}`)}, true},
		{"MCP's member in $/cancelRequest", []string{call, lsp(`{"requestId":7}`)}, false},
		{"before the call", []string{lsp(`{"id":7}`), call}, false},
		{"no params", []string{call, `{"jsonrpc":"2.0","method":"$/cancelRequest"}`}, false},
	} {
		c := frames(tc.frames...)
		i := slices.Index(tc.frames, call)
		var m wire.Message
		wire.Scan(c.Frames[i], &m)
		if got := cancelledLater(c.Frames, i, m.ID); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// lspTestAPI is an API of hover about one open document.
func lspTestAPI(t *testing.T) *apiRules {
	t.Helper()
	api, err := apispec.FromLSP([]byte(`{"hoverProvider":true}`), []apispec.LSPFile{{URI: "file:///ws/a.go", Text: []byte("package a\n")}})
	if err != nil {
		t.Fatal(err)
	}
	return &apiRules{api: api, codes: []int64{invalidParamsCode}}
}

// TestCancelledCallNotJudged: a call the input cancels is not held to
// its schema (LSP answers it -32800, RequestCancelled; MCP may not answer
// it at all), and no other rule fires for it either; the same call not
// cancelled is judged.
func TestCancelledCallNotJudged(t *testing.T) {
	api := lspTestAPI(t)
	lspProf, err := profile.New(profile.LSP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mcpProf, err := profile.New(profile.MCP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lspRules, mcpRules := profile.NewFuzzRules(lspProf, nil), profile.NewFuzzRules(mcpProf, nil)
	const (
		bad       = `{"jsonrpc":"2.0","id":1042,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///ws/b.go"},"position":{"line":0,"character":0}}}`
		good      = `{"jsonrpc":"2.0","id":1042,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///ws/a.go"},"position":{"line":0,"character":0}}}`
		lspCancel = `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1042}}`
		mcpCancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1042,"reason":"timeout"}}`
		cancelled = `{"jsonrpc":"2.0","id":1042,"error":{"code":-32800,"message":"Request cancelled"}}`
		internal  = `{"jsonrpc":"2.0","id":1042,"error":{"code":-32603,"message":"context canceled"}}`
		null      = `{"jsonrpc":"2.0","id":1042,"result":null}`
	)
	for _, tc := range []struct {
		name    string
		pr      *profileRules
		c       mutate.Case
		replies []string
		end     endKind
		rule    string
		calls   int // counted for the coverage
	}{
		{"lsp: invalid params, cancelled, -32800", lspRules, frames(bad, lspCancel), []string{cancelled}, endNone, "", 1},
		{"lsp: valid params, cancelled, -32603", lspRules, frames(good, lspCancel), []string{internal}, endNone, "", 1},
		{"lsp: invalid params, cancelled, answered", lspRules, frames(bad, lspCancel), []string{null}, endNone, "", 1},
		{"lsp: a cancelled call still needs its reply", lspRules, frames(good, lspCancel), nil, endTimeout, "hang", 1},
		{"lsp: invalid params, not cancelled", lspRules, frames(bad), []string{cancelled}, endNone, "params_error_code", 1},
		{"mcp: invalid params, cancelled, unanswered (not even counted)", mcpRules, frames(bad, mcpCancel), nil, endNone, "", 0},
		{"mcp: invalid params, cancelled, answered", mcpRules, frames(bad, mcpCancel), []string{null}, endNone, "", 1},
		{"mcp: valid params, cancelled, -32603", mcpRules, frames(good, mcpCancel), []string{internal}, endNone, "", 1},
		{"mcp: valid params, not cancelled, -32603", mcpRules, frames(good), []string{internal}, endNone, "internal_error", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := outcome{end: tc.end, synced: tc.end == endNone}
			for _, r := range tc.replies {
				o.replies = append(o.replies, []byte(r))
			}
			infos, _ := inspect(tc.c, tc.pr)
			v := judgeExchange(tc.c, infos, &o, tc.pr, api)
			rule := ""
			if v.rules != 0 {
				rule = v.rule.String()
			}
			if rule != tc.rule {
				t.Errorf("rule %q (%s), want %q", rule, v.note, tc.rule)
			}
			if len(v.calls) != tc.calls {
				t.Errorf("%d calls counted, want %d", len(v.calls), tc.calls)
			}
		})
	}
}

// TestAPISession: a fresh call of an LSP method comes alone, after a
// didChange of its document (with a version above every one before), or
// followed by its cancellation with an id of its own; an MCP call alone
// or cancelled; a plain JSON-RPC call always alone. Whatever the
// sequence, the call is what the API finds in the input.
func TestAPISession(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.go": "package a\n\nfunc A() {}\n", "b.go": "package a\n"})
	for _, tc := range []struct {
		prof      profile.Name
		workspace string
		// want are the sequences that must all show up: "call",
		// "change,call", "call,cancel", "change,call,cancel".
		want []string
	}{
		{profile.LSP, dir, []string{"call", "change,call", "call,cancel", "change,call,cancel"}},
		{profile.LSP, "", []string{"call", "call,cancel"}},
		{profile.MCP, "", []string{"call", "call,cancel"}},
		{profile.JSONRPC, "", []string{"call"}},
	} {
		name := string(tc.prof)
		if tc.workspace != "" {
			name += " with a workspace"
		}
		t.Run(name, func(t *testing.T) {
			cfg := Config{Target: transport.Target{Scheme: transport.TCP}, Profile: tc.prof, ProfileOptions: profile.Options{Workspace: tc.workspace},
				Execs: 1, OutDir: t.TempDir(), Seed: 5}
			if err := cfg.fill(); err != nil {
				t.Fatal(err)
			}
			r, err := newRun(context.Background(), &cfg, []mutate.Case{frames(`{"jsonrpc":"2.0","id":1,"method":"x"}`)})
			if err != nil {
				t.Fatal(err)
			}
			files := []apispec.LSPFile{{URI: profile.FileURI(filepath.Join(dir, "a.go")), Text: []byte("package a\n\nfunc A() {}\n")},
				{URI: profile.FileURI(filepath.Join(dir, "b.go")), Text: []byte("package a\n")}}
			api, err := apispec.FromLSP([]byte(`{"hoverProvider":true,"workspaceSymbolProvider":true}`), files)
			if err != nil {
				t.Fatal(err)
			}
			r.api = &apiRules{api: api, codes: []int64{invalidParamsCode}}
			w := r.newWorker(0)
			seen := map[string]bool{}
			lastVersion := int64(1)
			for range 400 {
				in, ok := r.apiInput(w)
				if !ok {
					t.Fatal("no input")
				}
				var kinds []string
				for _, f := range in.Frames {
					var m wire.Message
					wire.Scan(f, &m)
					switch {
					case stringIs(m.Method, "textDocument/didChange"):
						kinds = append(kinds, "change")
						var p struct {
							TextDocument struct{ Version int64 }
						}
						if err := json.Unmarshal(m.Params, &p); err != nil || p.TextDocument.Version <= lastVersion {
							t.Fatalf("didChange %s after version %d (%v)", f, lastVersion, err)
						}
						lastVersion = p.TextDocument.Version
					case stringIs(m.Method, "$/cancelRequest"), stringIs(m.Method, "notifications/cancelled"):
						kinds = append(kinds, "cancel")
					default:
						kinds = append(kinds, "call")
					}
				}
				if n := len(in.Frames); kinds[n-1] == "cancel" {
					var call wire.Message
					wire.Scan(in.Frames[n-2], &call)
					if string(call.ID) == "1" || !cancelledLater(in.Frames, n-2, call.ID) {
						t.Fatalf("%s does not cancel %s, or the call has the id of every other", in.Frames[n-1], in.Frames[n-2])
					}
				}
				seen[strings.Join(kinds, ",")] = true
				if _, m, _, ok := r.api.callOf(in); !ok || !strings.HasPrefix(m.Name, "textDocument/hover") && m.Name != "workspace/symbol" {
					t.Fatalf("the API finds no call in %q", in.Frames)
				}
			}
			var got []string
			for k := range seen {
				got = append(got, k)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("sequences %q, want %q", got, want)
			}
		})
	}
}

// TestAPIFuzzLSP runs rpcfuzz against the reference server's LSP mode
// with a workspace: the API is the server's capabilities (hover,
// documentSymbol, definition) about the workspace's documents, which
// every connection opened; each method is called with valid and invalid
// params and answered; the sessions' sequences reach the server (didChange,
// $/cancelRequest); and the fault-free server gets no finding, not even a
// warning.
func TestAPIFuzzLSP(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"shapes.go": "package shapes\n\n// Area is the area.\nfunc Area(w, h int) int { return w * h }\n\nfunc Perimeter(w, h int) int {\n\treturn 2 * (w + h)\n}\n",
		"util.py":   "def área(r):\n    return 3.14 * r * r  # 👋\n",
		"README":    "not opened",
	})
	srv, err := testsrv.New(testsrv.Config{Profile: testsrv.ProfileLSP})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); srv.Close() })
	bound, err := srv.Listen(ctx, testsrv.Addrs{TCPLSP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := transport.ParseTarget("tcp+lsp://" + bound.TCPLSP)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: tg, Profile: profile.LSP, ProfileOptions: profile.Options{Workspace: dir}, Discover: true,
		Workers: 1, Execs: 1500, Seed: 1, OutDir: t.TempDir(), Timeout: 2 * time.Second, Now: fixedClock, SlowFloor: time.Hour}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Findings {
		in, _ := os.ReadFile(filepath.Join(f.Dir, "input.bin"))
		t.Errorf("finding %s (%s): %s\n  input %q", f.ID, f.Severity, f.Note, in)
	}
	if s.Failures != 0 || s.API == nil {
		t.Fatalf("%d failures, API %+v", s.Failures, s.API)
	}
	var names []string
	for _, m := range s.API.Methods {
		names = append(names, m.Name)
		t.Logf("%s: %d valid, %d invalid, %d unjudged; %d results, errors %v, %d unanswered",
			m.Name, m.CallsValid, m.CallsInvalid, m.CallsUnjudged, m.Results, m.ErrorsByCode, m.NoReply)
		if m.Source != "lsp" || m.CallsValid == 0 || m.CallsInvalid == 0 || m.Results == 0 || m.ErrorsByCode["-32602"] == 0 {
			t.Errorf("%s: %+v: want lsp calls, valid and invalid, answered with results and -32602", m.Name, m)
		}
	}
	if want := []string{"textDocument/definition", "textDocument/documentSymbol", "textDocument/hover"}; !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Errorf("the API has %q, want %q", names, want)
	}
	if len(s.API.NeverReached) > 0 {
		t.Errorf("never reached: %q", s.API.NeverReached)
	}
	st := srv.LSPStats()
	t.Logf("server: requests %v, notifications %v, errors %v, $/cancelRequest %d", st.Requests, st.Notifications, st.Errors, st.CancelRequests)
	if st.Notifications["textDocument/didOpen"] < 2 || st.Notifications["textDocument/didChange"] == 0 || st.CancelRequests == 0 {
		t.Errorf("the server saw %v: want the documents opened, changed, and calls cancelled", st.Notifications)
	}
}

// TestNoteInitialize: the dialer keeps the result of the first initialize
// it saw, and nothing else.
func TestNoteInitialize(t *testing.T) {
	var d dialer
	init := []byte(`{"jsonrpc":"2.0","id":"rpcfuzz-ctl-1","method":"initialize","params":{}}`)
	d.noteInitialize([]byte(`{"jsonrpc":"2.0","id":"rpcfuzz-ctl-1","method":"shutdown"}`), []byte(`{"jsonrpc":"2.0","id":"rpcfuzz-ctl-1","result":null}`))
	d.noteInitialize(init, []byte(`{"jsonrpc":"2.0","id":"rpcfuzz-ctl-1","error":{"code":-32602,"message":"x"}}`))
	if d.initResult.Load() != nil {
		t.Fatal("kept a result that is no initialize result")
	}
	d.noteInitialize(init, []byte(`{"jsonrpc":"2.0","id":"rpcfuzz-ctl-1","result":{"capabilities":{"hoverProvider":true}}}`))
	d.noteInitialize(init, []byte(`{"jsonrpc":"2.0","id":"rpcfuzz-ctl-2","result":{"capabilities":{}}}`))
	if got := d.initResult.Load(); got == nil || string(*got) != `{"capabilities":{"hoverProvider":true}}` {
		t.Errorf("kept %v", got)
	}
}

// TestCancelledReplyLate: under MCP a cancelled call may go unanswered, so
// its exchange does not wait for its reply; one that comes in the next
// exchange is set aside as late (the connection remembers the cancelled
// call's id), not judged a reply to nothing.
func TestCancelledReplyLate(t *testing.T) {
	p, err := profile.New(profile.MCP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr := profile.NewFuzzRules(p, nil)
	first := frames(`{"jsonrpc":"2.0","id":1042,"method":"tools/call","params":{"name":"slow"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1042,"reason":"timeout"}}`)
	next := frames(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	var lw lateWindow
	infos, _ := inspect(first, pr)
	lw.open(infos)
	lw.close(0, 0)
	infos, _ = inspect(next, pr)
	stale := lw.open(infos)
	if len(stale) != 1 || string(stale[0]) != "1042" {
		t.Fatalf("remembered ids %q, want the cancelled call's", stale)
	}
	o := outcome{synced: true, staleIDs: stale, replies: [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":1042,"result":{"content":[]}}`), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}
	if v := judgeExchange(next, infos, &o, pr, nil); v.rules != 0 || o.late != 1 {
		t.Errorf("rules %v (%s), %d late; want none, 1 late", v.rules, v.note, o.late)
	}
}

// TestAPINoteNotInKey: when an API oracle fires on the reply another rule
// broke, its note (joined to the other's) is no part of that rule's dedup
// key: gopls's -32700 for params it cannot decode is one finding whatever
// the method and the member it could not decode; the API oracle's own key
// is its rule and method.
func TestAPINoteNotInKey(t *testing.T) {
	const base = "a call in valid JSON answered with -32700 (parse error)"
	verdictOf := func(rule check.Rule, method, apiNote string) verdict {
		call := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":[]}`
		return verdict{rule: rule, api: method, code: -32700, in: []byte(call), inClass: oracle.Call,
			reply: []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32700,"message":"JSON RPC parse error"}}`),
			note:  base + "; " + method + ": " + apiNote}
	}
	a := dedupKey(verdictOf(check.WrongErrorCode, "textDocument/hover", "params its schema rejects (at /: got array, want object) were refused with error -32700; want -32602"))
	b := dedupKey(verdictOf(check.WrongErrorCode, "textDocument/rename", "params its schema rejects (at /position: got string, want object) were refused with error -32700; want -32602"))
	if a != b || strings.Contains(a, "schema") {
		t.Errorf("keys %q and %q: want one, without the API's note", a, b)
	}
	if k := dedupKey(verdictOf(check.ParamsErrorCode, "textDocument/hover", "x")); k != "params_error_code|textDocument/hover|-32700" {
		t.Errorf("the API oracle's own key %q", k)
	}
}
