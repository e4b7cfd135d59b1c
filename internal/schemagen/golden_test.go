package schemagen

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestInvalidGolden pins what Invalid draws for every schema of the table
// over a few seeds, byte for byte: a refactor of the generator must not
// change a single value a seed gives.
func TestInvalidGolden(t *testing.T) {
	var b bytes.Buffer
	for _, tc := range schemas {
		for seed := range uint64(8) {
			v, broke, err := InvalidWith([]byte(tc.schema), rand.New(rand.NewPCG(seed, 5)))
			fmt.Fprintf(&b, "%s\t%d\t%s\t%s\t%v\n", tc.name, seed, broke, v, err)
		}
	}
	path := filepath.Join("testdata", "invalid.golden.txt")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("Invalid differs from %s (go test -update rewrites it)", path)
	}
}
