package interop

// API-aware fuzzing of gopls (issue 18, "--profile lsp: the requests the
// server's capabilities announce, on the files of --workspace"): rpcfuzz
// opens the workspace's documents on every connection after the
// handshake, reads the requests gopls announces in its InitializeResult
// (apispec.FromLSP: LSP 3.17's params for each, about those documents,
// with positions inside them and just outside), calls each with params
// valid and invalid by those schemas, now and then after a didChange of
// the document or followed by its $/cancelRequest, and holds the replies
// to the schemas. The baseline is testdata/fuzz-baselines/api-gopls.txt,
// read with gopls.txt (the envelope run's: the API run mutates the corpus
// too, and gopls exits on any message it cannot decode).

import (
	"os"
	"path/filepath"
	"testing"
)

// goplsAPI is what gopls v0.23.0 announces to rpcload's initialize
// (whose client capabilities declare no rename.prepareSupport, so no
// textDocument/prepareRename), as FromLSP names the requests.
var goplsAPI = []string{
	"textDocument/definition", "textDocument/typeDefinition", "textDocument/implementation",
	"textDocument/references", "textDocument/prepareCallHierarchy", "textDocument/prepareTypeHierarchy",
	"textDocument/documentHighlight", "textDocument/documentLink", "textDocument/hover",
	"textDocument/codeLens", "textDocument/foldingRange", "textDocument/selectionRange",
	"textDocument/documentSymbol", "textDocument/semanticTokens/full", "textDocument/semanticTokens/range",
	"textDocument/inlayHint", "textDocument/completion", "textDocument/signatureHelp",
	"textDocument/codeAction", "textDocument/formatting", "textDocument/rename", "workspace/symbol",
}

// TestAPIFuzzGopls fuzzes gopls on stdio (started as TestGopls starts it)
// with --profile lsp and --workspace, a copy of testdata/lspws: its
// go.mod is of no language LSP names, so shapes.go is the document asked
// about. The copy must be unchanged afterwards: rename and formatting
// only return edits, and rpcfuzz applies none (workspace/applyEdit is
// answered applied: false).
//
// --api-share 0.9, not the default half: gopls exits on every message it
// cannot decode (gopls.txt), and a restart, its workspace loaded again,
// takes most of a second; at half the inputs the 15 s went to restarts,
// and the envelope run (TestFuzzGopls) covers those inputs. --timeout 3s:
// valid params at their edges (5,000 positions for selectionRange, as
// many diagnostics for codeAction, a 4,000-character workspace/symbol
// query) took gopls more than a second now and then beside the rest of
// the suite, a "hang" that its confirmation, answered in time, dropped
// after seconds of waiting.
func TestAPIFuzzGopls(t *testing.T) {
	t.Parallel()
	gopls := findGopls(t)
	ws := filepath.Join(t.TempDir(), "lspws")
	if err := os.CopyFS(ws, os.DirFS(filepath.Join("testdata", "lspws"))); err != nil {
		t.Fatal(err)
	}
	before := snapshotDir(t, ws)
	fuzzTarget{name: "api-gopls", child: goplsCommand(t, gopls), minExecs: 30, duration: apiFuzzDuration, minimizeBudget: 20,
		args: []string{"--profile", "lsp", "--framing", "content-length", "--max-restarts", "50",
			"--workspace", ws, "--api-share", "0.9", "--timeout", "3s"},
		api: &fuzzAPI{envelope: "gopls", methods: goplsAPI},
		done: func(t *testing.T) {
			if after := snapshotDir(t, ws); after != before {
				t.Errorf("the workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		},
	}.run(t)
}
