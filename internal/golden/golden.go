// Package golden is the golden-file check the tests of several packages
// share: output compared byte for byte with a file under testdata/, and
// rewritten from the output with `go test -update`. It is imported by tests
// only.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/, and the examples CheckFile names) from the output")

// Check compares got with testdata/name (rewriting it first under -update)
// and fails t, showing got, when they differ.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	CheckFile(t, filepath.Join("testdata", name), got)
}

// CheckFile is Check for a golden file elsewhere than testdata/, such as
// an example the docs show.
func CheckFile(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it); got:\n%s", path, got)
	}
}
