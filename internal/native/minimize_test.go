package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/mutate"
)

// TestWrite writes a minimized case and its regression test, in the
// package clause of the fuzz test's file; a case shrunk further from a
// literal case replaces that one and its test.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	fuzzTest := "package myserver_test\n\nimport \"testing\"\n\nfunc FuzzRPC(f *testing.F) {}\n"
	if err := os.WriteFile(filepath.Join(dir, "fuzz_test.go"), []byte(fuzzTest), 0o644); err != nil {
		t.Fatal(err)
	}
	big := mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":"xxxx","method":"a"}`)}}
	small := mutate.Case{Frames: [][]byte{[]byte(`{"id":"xxxx"}`)}}
	first := &Minimized{FuzzTest: "FuzzRPC", Dir: dir, Rule: "crash", Input: big, Case: big}
	if err := first.write(filepath.Join(dir, "testdata", "fuzz", "FuzzRPC", "5d1e")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(first.TestFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package myserver_test\n", "func " + first.TestName + "(t *testing.T) {", `rpcfuzz.Replay(t, "FuzzRPC", "testdata/rpcfuzz/` + filepath.Base(first.CaseFile) + `")`, "testdata/fuzz/FuzzRPC/5d1e (crash)"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("regression test lacks %q:\n%s", want, src)
		}
	}
	again := &Minimized{FuzzTest: "FuzzRPC", Dir: dir, Rule: "crash", Input: big, Case: small, replaces: first.CaseFile}
	if err := again.write("testdata/fuzz/FuzzRPC/5d1e"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{first.CaseFile, first.TestFile} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v), replaced by %s", gone, err, again.CaseFile)
		}
	}
	for _, there := range []string{again.CaseFile, again.TestFile} {
		if _, err := os.Stat(there); err != nil {
			t.Error(err)
		}
	}
	if again.CaseFile == first.CaseFile || again.TestName == first.TestName {
		t.Fatalf("the smaller case has the same names as the bigger one: %s, %s", again.CaseFile, again.TestName)
	}
}
