package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLSPDocumentParamsFilledIn: with an opened file, a textDocument/
// request without params gets {"textDocument":{"uri":...}} of that file,
// and other requests stay without params.
func TestLSPDocumentParamsFilledIn(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "version: 1\ncommand: [x]\nprofile: {name: lsp, open: a.go}\nload: {rate: 1, duration: 1s}\nmix:\n" +
		"  - method: textDocument/documentSymbol\n  - method: workspace/symbol\n"
	sc, err := Parse("s.yaml", []byte(src), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, static := sc.Mix[0].Params.Static()
	if !static || !strings.Contains(string(b), `"uri":"file://`+filepath.ToSlash(dir)+`/a.go"`) {
		t.Errorf("documentSymbol params %s", b)
	}
	if sc.Mix[1].Params != nil {
		t.Errorf("workspace/symbol got params")
	}
}
