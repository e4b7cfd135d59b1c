package apispec

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

// testLSPFiles are two opened documents: a Go file whose last line is
// empty and one with a non-ASCII line (positions count UTF-16 units).
var testLSPFiles = []LSPFile{
	{URI: "file:///ws/a.go", Text: []byte("package a\n\n// Area is an area.\nfunc Area() int { return 1 }\n")},
	{URI: "file:///ws/b.py", Text: []byte("x = 'héllo 👋'\n")},
	{URI: "file:///ws/c.md", Text: []byte("# 👋")}, // its last character is a surrogate pair
}

// TestFromLSPCapabilities: a provider is announced by true or an options
// object, not by false or its absence; semanticTokens' full and range and
// rename's prepareProvider by their own member.
func TestFromLSPCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name, caps string
		want       []string
	}{
		{"true", `{"hoverProvider":true}`, []string{"textDocument/hover"}},
		{"options object", `{"hoverProvider":{}}`, []string{"textDocument/hover"}},
		{"options with workDoneProgress", `{"hoverProvider":{"workDoneProgress":true}}`, []string{"textDocument/hover"}},
		{"false", `{"hoverProvider":false}`, nil},
		{"absent", `{"textDocumentSync":1}`, nil},
		{"null", `{"hoverProvider":null}`, nil},
		{"a number", `{"hoverProvider":1}`, nil},
		{"rename without prepare", `{"renameProvider":true}`, []string{"textDocument/rename"}},
		{"rename, prepare false", `{"renameProvider":{"prepareProvider":false}}`, []string{"textDocument/rename"}},
		{"rename with prepare", `{"renameProvider":{"prepareProvider":true}}`, []string{"textDocument/prepareRename", "textDocument/rename"}},
		{"semantic tokens, full only", `{"semanticTokensProvider":{"legend":{},"full":{"delta":true}}}`, []string{"textDocument/semanticTokens/full"}},
		{"semantic tokens, range only", `{"semanticTokensProvider":{"legend":{},"range":true,"full":false}}`, []string{"textDocument/semanticTokens/range"}},
		{"semantic tokens, neither", `{"semanticTokensProvider":true}`, nil},
		{"workspace symbols", `{"workspaceSymbolProvider":true}`, []string{"workspace/symbol"}},
		{"executeCommand is never called", `{"executeCommandProvider":{"commands":["x"]}}`, nil},
		{"several", `{"referencesProvider":true,"documentFormattingProvider":{},"codeActionProvider":{"codeActionKinds":["quickfix"]},"completionProvider":{"triggerCharacters":["."]}}`,
			[]string{"textDocument/codeAction", "textDocument/completion", "textDocument/formatting", "textDocument/references"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, err := FromLSP([]byte(tc.caps), testLSPFiles)
			if err != nil {
				t.Fatal(err)
			}
			if got := api.Names(); !slices.Equal(got, tc.want) {
				t.Errorf("methods %q, want %q", got, tc.want)
			}
			if len(api.Notes) > 0 {
				t.Errorf("notes %q", api.Notes)
			}
			for _, m := range api.Methods {
				if m.Kind != Plain || m.Source != "lsp" || m.Call != m.Name || len(m.Examples) == 0 {
					t.Errorf("%s: kind %s source %q call %q, %d examples", m.Name, m.Kind, m.Source, m.Call, len(m.Examples))
				}
			}
		})
	}
	for _, bad := range []string{``, `[]`, `null`, `"x"`, `{`} {
		if _, err := FromLSP([]byte(bad), testLSPFiles); err == nil {
			t.Errorf("capabilities %q: no error", bad)
		}
	}
	api, err := FromLSP([]byte(`{"hoverProvider":true,"workspaceSymbolProvider":true}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := api.Names(); !slices.Equal(got, []string{"workspace/symbol"}) || len(api.Notes) != 1 || !strings.Contains(api.Notes[0], "textDocument/hover") {
		t.Errorf("no open document: methods %q, notes %q", got, api.Notes)
	}
}

// allLSPCapabilities announces every request FromLSP knows.
const allLSPCapabilities = `{"declarationProvider":true,"definitionProvider":true,"typeDefinitionProvider":true,
 "implementationProvider":true,"referencesProvider":true,"callHierarchyProvider":true,"typeHierarchyProvider":true,
 "documentHighlightProvider":true,"documentLinkProvider":{},"hoverProvider":true,"codeLensProvider":{},
 "foldingRangeProvider":true,"selectionRangeProvider":true,"documentSymbolProvider":true,
 "semanticTokensProvider":{"legend":{"tokenTypes":[],"tokenModifiers":[]},"full":true,"range":true},
 "inlineValueProvider":true,"inlayHintProvider":true,"monikerProvider":true,"completionProvider":{},
 "diagnosticProvider":{"interFileDependencies":false,"workspaceDiagnostics":false},"signatureHelpProvider":{},
 "codeActionProvider":true,"colorProvider":true,"documentFormattingProvider":true,"documentRangeFormattingProvider":true,
 "documentOnTypeFormattingProvider":{"firstTriggerCharacter":"}"},"renameProvider":{"prepareProvider":true},
 "linkedEditingRangeProvider":true,"workspaceSymbolProvider":true}`

func mustLSP(t *testing.T) *API {
	t.Helper()
	api, err := FromLSP([]byte(allLSPCapabilities), testLSPFiles)
	if err != nil {
		t.Fatal(err)
	}
	if api.Len() != len(lspRequests) || len(api.Notes) > 0 {
		t.Fatalf("%d methods of %d, notes %q", api.Len(), len(lspRequests), api.Notes)
	}
	return api
}

// TestFromLSPExamples: every example is valid params, asks about an opened
// document, and the positions of a file's examples are inside it and just
// outside it; each example reads back as a call of its method (Find).
func TestFromLSPExamples(t *testing.T) {
	api := mustLSP(t)
	for _, m := range api.Methods {
		for _, ex := range m.Examples {
			if v, why := m.CheckParams(ex); v != Valid {
				t.Errorf("%s: example %s judged %d (%s)", m.Name, ex, v, why)
			}
			var msg wire.Message
			wire.Scan(m.Frame(nil, []byte("3"), ex), &msg)
			if got, params, ok := api.Find(&msg); !ok || got != m || string(params) != string(ex) {
				t.Errorf("%s: the call of %s reads back as %v %s", m.Name, ex, ok, nameOf(got))
			}
		}
	}
	hover := find(t, api, "textDocument/hover")
	got := map[string][]string{}
	for _, ex := range hover.Examples {
		var p struct {
			TextDocument struct{ URI string }
			Position     lspPos
		}
		if err := json.Unmarshal(ex, &p); err != nil {
			t.Fatal(err)
		}
		got[p.TextDocument.URI] = append(got[p.TextDocument.URI], fmt.Sprintf("%d:%d", p.Position.Line, p.Position.Character))
	}
	// 0:0, the middle, the start of the last word, the last character of
	// the last line with text, the line after the last, one past the
	// middle line's end. b.py is one line of 14 UTF-16 units (the emoji
	// takes two) and the empty line after it, its last word "llo" (é is no
	// ASCII letter); c.md has no word, and its last character is a
	// surrogate pair (at 2, not 3).
	for uri, want := range map[string][]string{
		"file:///ws/a.go": {"0:0", "2:9", "3:18", "3:27", "5:0", "2:20"},
		"file:///ws/b.py": {"0:0", "1:0", "0:7", "0:13", "2:0", "1:1"},
		"file:///ws/c.md": {"0:0", "0:2", "0:2", "1:0", "0:5"},
	} {
		if !slices.Equal(got[uri], want) {
			t.Errorf("%s: hover positions %q, want %q", uri, got[uri], want)
		}
	}
	if fmtg := find(t, api, "textDocument/onTypeFormatting"); !strings.Contains(string(fmtg.Examples[0]), `"ch":"}"`) {
		t.Errorf("onTypeFormatting's example %s does not use the trigger character", fmtg.Examples[0])
	}
	if ws := find(t, api, "workspace/symbol"); len(ws.Examples) != 2 || string(ws.Examples[1]) != `{"query":"package"}` {
		t.Errorf("workspace/symbol examples %q", ws.Examples)
	}
}

// TestFromLSPParams: params a server must take are valid, whatever the
// position (outside the file too) or extra member; params LSP 3.17 rules
// out are invalid: a document that is not open, a position that is no
// uinteger, a required member missing or of another type.
func TestFromLSPParams(t *testing.T) {
	api := mustLSP(t)
	const doc = `"textDocument":{"uri":"file:///ws/a.go"}`
	for _, tc := range []struct {
		method, params string
		want           Verdict
	}{
		{"textDocument/hover", `{` + doc + `,"position":{"line":0,"character":0}}`, Valid},
		{"textDocument/hover", `{` + doc + `,"position":{"line":2147483647,"character":2147483647}}`, Valid},
		{"textDocument/hover", `{` + doc + `,"position":{"line":0,"character":0},"workDoneToken":"t"}`, Valid},
		{"textDocument/hover", `{` + doc + `,"position":{"line":2147483648,"character":0}}`, Invalid},
		{"textDocument/hover", `{` + doc + `,"position":{"line":-1,"character":0}}`, Invalid},
		{"textDocument/hover", `{` + doc + `,"position":{"line":0.5,"character":0}}`, Invalid},
		{"textDocument/hover", `{` + doc + `,"position":{"line":0}}`, Invalid},
		{"textDocument/hover", `{` + doc + `}`, Invalid},
		{"textDocument/hover", `{"textDocument":{"uri":"file:///ws/c.go"},"position":{"line":0,"character":0}}`, Invalid},
		{"textDocument/hover", `{"textDocument":{},"position":{"line":0,"character":0}}`, Invalid},
		{"textDocument/hover", ``, Invalid},
		{"textDocument/hover", `[]`, Invalid},
		{"textDocument/references", `{` + doc + `,"position":{"line":0,"character":0},"context":{"includeDeclaration":true}}`, Valid},
		{"textDocument/references", `{` + doc + `,"position":{"line":0,"character":0}}`, Invalid},
		{"textDocument/references", `{` + doc + `,"position":{"line":0,"character":0},"context":{"includeDeclaration":1}}`, Invalid},
		{"textDocument/codeAction", `{` + doc + `,"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"context":{"diagnostics":[]}}`, Valid},
		{"textDocument/codeAction", `{` + doc + `,"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"context":{"diagnostics":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"message":"m","severity":2,"code":"E1"}]}}`, Valid},
		{"textDocument/codeAction", `{` + doc + `,"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"context":{}}`, Invalid},
		{"textDocument/codeAction", `{` + doc + `,"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"context":{"diagnostics":[{"message":"m"}]}}`, Invalid},
		{"textDocument/formatting", `{` + doc + `,"options":{"tabSize":4,"insertSpaces":true,"x-custom":"v"}}`, Valid},
		{"textDocument/formatting", `{` + doc + `,"options":{"tabSize":4}}`, Invalid},
		{"textDocument/formatting", `{` + doc + `,"options":{"tabSize":4,"insertSpaces":true,"x-custom":{}}}`, Invalid},
		{"textDocument/rename", `{` + doc + `,"position":{"line":3,"character":5},"newName":"B"}`, Valid},
		{"textDocument/rename", `{` + doc + `,"position":{"line":3,"character":5}}`, Invalid},
		{"textDocument/completion", `{` + doc + `,"position":{"line":3,"character":5},"context":{"triggerKind":2,"triggerCharacter":"."}}`, Valid},
		{"textDocument/completion", `{` + doc + `,"position":{"line":3,"character":5},"context":{"triggerKind":4}}`, Invalid},
		{"textDocument/selectionRange", `{` + doc + `,"positions":[]}`, Valid},
		{"textDocument/selectionRange", `{` + doc + `,"positions":[{"line":1}]}`, Invalid},
		{"textDocument/documentSymbol", `{` + doc + `}`, Valid},
		{"workspace/symbol", `{"query":""}`, Valid},
		{"workspace/symbol", `{}`, Invalid},
	} {
		m := find(t, api, tc.method)
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		if got, why := m.CheckParams(params); got != tc.want {
			t.Errorf("%s %s: verdict %d (%s), want %d", tc.method, tc.params, got, why, tc.want)
		}
	}
}

// TestFromLSPResults: the result schemas take what LSP 3.17 allows (null
// included) and refuse a result of another shape.
func TestFromLSPResults(t *testing.T) {
	api := mustLSP(t)
	const rng = `{"start":{"line":0,"character":0},"end":{"line":0,"character":4}}`
	for _, tc := range []struct {
		method, result string
		want           Verdict
	}{
		{"textDocument/hover", `null`, Valid},
		{"textDocument/hover", `{"contents":"x"}`, Valid},
		{"textDocument/hover", `{"contents":{"kind":"markdown","value":"x"},"range":` + rng + `}`, Valid},
		{"textDocument/hover", `{"contents":[{"language":"go","value":"x"},"y"]}`, Valid},
		{"textDocument/hover", `{}`, Invalid},
		{"textDocument/hover", `{"contents":1}`, Invalid},
		{"textDocument/hover", `[]`, Invalid},
		{"textDocument/definition", `null`, Valid},
		{"textDocument/definition", `{"uri":"file:///ws/a.go","range":` + rng + `}`, Valid},
		{"textDocument/definition", `[]`, Valid},
		{"textDocument/definition", `[{"targetUri":"file:///ws/a.go","targetRange":` + rng + `,"targetSelectionRange":` + rng + `}]`, Valid},
		{"textDocument/definition", `[{"uri":"file:///ws/a.go"}]`, Invalid},
		{"textDocument/definition", `{"uri":"file:///ws/a.go","range":{"start":{"line":-1,"character":0},"end":{"line":0,"character":0}}}`, Invalid},
		{"textDocument/documentSymbol", `[{"name":"Area","kind":12,"range":` + rng + `,"selectionRange":` + rng + `}]`, Valid},
		{"textDocument/documentSymbol", `[{"name":"Area"}]`, Invalid},
		{"textDocument/selectionRange", `[{"range":` + rng + `,"parent":{"range":` + rng + `}}]`, Valid},
		{"textDocument/selectionRange", `[{"range":` + rng + `,"parent":{}}]`, Invalid},
		{"textDocument/semanticTokens/full", `{"resultId":"1","data":[0,1,2,3,4]}`, Valid},
		{"textDocument/semanticTokens/full", `{"data":[-1]}`, Invalid},
		{"textDocument/completion", `{"isIncomplete":false,"items":[{"label":"x"}]}`, Valid},
		{"textDocument/completion", `[{"label":"x","kind":3}]`, Valid},
		{"textDocument/completion", `[{"kind":3}]`, Invalid},
		{"textDocument/prepareRename", `{"range":` + rng + `,"placeholder":"Area"}`, Valid},
		{"textDocument/prepareRename", `{"defaultBehavior":true}`, Valid},
		{"textDocument/prepareRename", `{"placeholder":"Area"}`, Invalid},
		{"textDocument/rename", `{"changes":{}}`, Valid},
		{"textDocument/rename", `[]`, Invalid},
		{"textDocument/formatting", `[{"range":` + rng + `,"newText":""}]`, Valid},
		{"textDocument/formatting", `[{"range":` + rng + `}]`, Invalid},
		{"textDocument/moniker", `"anything"`, NotJudged}, // no result schema
		{"textDocument/documentColor", `null`, NotJudged},
	} {
		if got, why := find(t, api, tc.method).CheckResult([]byte(tc.result)); got != tc.want {
			t.Errorf("%s result %s: verdict %d (%s), want %d", tc.method, tc.result, got, why, tc.want)
		}
	}
}

// TestFromLSPPropose: what Propose offers as valid params of each LSP
// method the validator finds valid, and what it offers as invalid,
// invalid.
func TestFromLSPPropose(t *testing.T) {
	api := mustLSP(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, m := range api.Methods {
		for i := range 60 {
			valid := i%2 == 0
			p, broke, err := m.Propose(r, valid)
			if err != nil {
				t.Fatalf("%s valid=%v: %v", m.Name, valid, err)
			}
			want := Invalid
			if valid {
				want = Valid
			}
			if got, why := m.CheckParams(p); got != want && got != NotJudged {
				t.Fatalf("%s: proposed %.200s (valid=%v, broke %q) judged %d (%s)", m.Name, p, valid, broke, got, why)
			}
		}
	}
}

// FuzzFromLSP: FromLSP never panics, and whatever it makes of a server's
// capabilities and a file's text, every example it gives is valid params.
// (An input that announces everything compiles some 60 schemas: tens of
// milliseconds, several times that under the fuzzer's instrumentation.)
func FuzzFromLSP(f *testing.F) {
	f.Add([]byte(allLSPCapabilities), []byte("package a\n\nfunc A() {}\n"))
	f.Add([]byte(`{"hoverProvider":true,"renameProvider":{"prepareProvider":{}}}`), []byte(""))
	f.Add([]byte(`{"semanticTokensProvider":{"full":{"delta":true}},"documentOnTypeFormattingProvider":{"firstTriggerCharacter":7}}`), []byte("\r\n\xff\xfe"))
	f.Add([]byte(`{"hoverProvider":true,"hoverProvider":false}`), []byte("a\nb"))
	f.Fuzz(func(t *testing.T, caps, text []byte) {
		files := []LSPFile{{URI: "file:///ws/a.go", Text: text}, {URI: "file:///ws/a.go"}, {URI: ""}}
		api, err := FromLSP(caps, files)
		if err != nil {
			return
		}
		for _, m := range api.Methods {
			for _, ex := range m.Examples {
				if v, why := m.CheckParams(ex); v != Valid {
					t.Fatalf("%s: example %s judged %d (%s)", m.Name, ex, v, why)
				}
			}
		}
	})
}
