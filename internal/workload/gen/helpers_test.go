package gen

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// newRand seeds a generator for one request, the way the engine will: from
// the run's seed and the request's sequence number.
func newRand(seed, seq uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seq)) }

// decode reads a template written as JSON, the way a JSON scenario would
// reach Compile (every number a float64).
func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test template %s: %v", s, err)
	}
	return v
}

func mustCompile(t testing.TB, v any, feeders map[string]*Feeder) *Template {
	t.Helper()
	tmpl, err := Compile(v, feeders)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return tmpl
}

// gen appends the params for seq with a generator seeded by (seed, seq),
// checking that they are valid JSON.
func gen(t testing.TB, tmpl *Template, seed, seq uint64) []byte {
	t.Helper()
	out, ok := tmpl.Append(nil, newRand(seed, seq), seq)
	if !ok {
		t.Fatalf("seq %d: Append reported an exhausted feeder", seq)
	}
	if !json.Valid(out) {
		t.Fatalf("seq %d: invalid JSON %q", seq, out)
	}
	return out
}

func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoad(t testing.TB, name, content, mode string) *Feeder {
	t.Helper()
	f, err := LoadFeeder(writeFile(t, name, content), "", mode)
	if err != nil {
		t.Fatalf("LoadFeeder: %v", err)
	}
	return f
}

// addrsCSV is a feeder whose balance is derived from its address, so a test
// can tell whether two $feed of one request read the same row.
const addrsCSV = "address,balance\n" +
	"0x0000000000000000000000000000000000000001,1\n" +
	"0x0000000000000000000000000000000000000002,2\n" +
	"0x0000000000000000000000000000000000000003,3\n" +
	"0x0000000000000000000000000000000000000004,4\n" +
	"0x0000000000000000000000000000000000000005,5\n"
