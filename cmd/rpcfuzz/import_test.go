package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
)

// TestImportGoChoiceStream: a choice-stream corpus file, as an
// rpcfuzz.Fuzz test with these options saves it, imports as the messages
// that test sent when import-go is given the same options.
func TestImportGoChoiceStream(t *testing.T) {
	dir := t.TempDir()
	params := filepath.Join(dir, "params.json")
	schemas := map[string]json.RawMessage{"add": json.RawMessage(`{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}`)}
	b, _ := json.Marshal(schemas)
	if err := os.WriteFile(params, b, 0o600); err != nil {
		t.Fatal(err)
	}
	seedsFile := filepath.Join(dir, "seeds.jsonl")
	seeds := [][]byte{[]byte(`{"jsonrpc":"2.0","id":7,"method":"echo","params":["x"]}`), []byte(`{"jsonrpc":"2.0","method":"log","params":{"level":1}}`)}
	if err := os.WriteFile(seedsFile, append(bytes.Join(seeds, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	// The options of the fuzz test, as rpcfuzz.Fuzz gives them to the
	// native expander (a stream target: newline framing).
	opts := native.Options{Methods: []string{"add", "echo"}, Params: schemas, Seeds: seeds, MaxFrame: 4096, Framing: mutate.FramingNewline}
	exp, err := native.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(dir, "testdata", "fuzz", "FuzzServer")
	if err := os.MkdirAll(corpus, 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string][][]byte{}
	for i, data := range [][]byte{[]byte("\x00\x05some choices"), []byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09"), []byte("\x00\x00")} {
		name := "stream-" + string(rune('a'+i))
		if err := os.WriteFile(filepath.Join(corpus, name), fuzzcase.MarshalGoCorpus(data), 0o644); err != nil {
			t.Fatal(err)
		}
		want[name] = exp.Expand(data).Case.Frames
	}
	out := filepath.Join(dir, "imported")
	code, stdout, stderr := run("import-go", corpus, "--out", out, "--method", "add", "--method", "echo",
		"--params", params, "--seeds", seedsFile, "--max-frame", "4096", "--stream")
	if code != cli.ExitOK {
		t.Fatalf("import-go: exit %d\n%s\n%s", code, stdout, stderr)
	}
	dirs, err := fuzz.FindingDirs(out)
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		file, fdir, ok := strings.Cut(line, " -> ")
		if !ok {
			t.Fatalf("import-go said %q", line)
		}
		_, c, err := fuzz.ReadFinding(fdir)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[filepath.Base(file)]; len(w) == 0 || !slices.EqualFunc(c.Frames, w, bytes.Equal) {
			t.Errorf("%s imported as %q, want %q", file, c.Frames, w)
		} else {
			matched++
		}
	}
	if matched != len(want) || len(dirs) > len(want) {
		t.Errorf("%d of %d files imported as the fuzz test sent them (%d finding dirs)", matched, len(want), len(dirs))
	}

	// Bad options are refused, naming the flag.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--params", filepath.Join(dir, "none.json")}, "--params:"},
		{[]string{"--params", seedsFile}, "--params " + seedsFile + ": not a JSON object"},
		{[]string{"--seeds", params + ".missing"}, "--seeds:"},
		{[]string{"--max-frame", "big"}, `--max-frame: "big" is not a positive size`},
	} {
		code, _, stderr := run(append([]string{"import-go", corpus, "--out", t.TempDir()}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
