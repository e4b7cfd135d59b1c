package stats

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// dirEntries lists dir's names, to prove no temporary file was left behind.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestResultFileRoundTrip(t *testing.T) {
	r := sampleResult(t)
	r.Tool, r.StartedAt, r.Interrupted = "rpcload", "2026-01-02T03:04:05Z", true
	r.Settings = map[string]any{"rate": 100.0, "method": "eth_call", "stream": false}
	r.Series = []Point{{T: 1, Sent: 3, P50us: 7}, {T: 2, InFlight: -1}}
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if err := WriteJSONFile(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip changed the result\n got %+v\nwant %+v", got, r)
	}
	if names := dirEntries(t, dir); len(names) != 1 || names[0] != "result.json" {
		t.Errorf("directory holds %q; want only result.json", names)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("file mode %v, %v; want 0644 like any report", fi.Mode(), err)
	}

	// Writing again replaces the file.
	r.Target = "tcp://127.0.0.1:1"
	if err := WriteJSONFile(path, r); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadJSONFile(path); err != nil || got.Target != r.Target {
		t.Errorf("after rewrite: %v, target %q", err, got.Target)
	}
}

// TestWriteJSONFileFails checks both ways the atomic write can fail: no
// temporary file can be created, or the rename cannot replace the target.
// Either way the error names the path and nothing is left behind.
func TestWriteJSONFileFails(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "dir", "r.json")
	err := WriteJSONFile(missing, &Result{Schema: Schema})
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "stats: writing "+missing) {
		t.Errorf("missing directory: %v; want a stats error naming %s and wrapping ErrNotExist", err, missing)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("left behind %q", names)
	}

	// A non-empty directory where the file should go: the temporary file is
	// written, the rename fails, and the temporary file must be removed.
	target := filepath.Join(dir, "r.json")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = WriteJSONFile(target, &Result{Schema: Schema})
	if err == nil || !strings.Contains(err.Error(), target) {
		t.Errorf("rename over a directory: %v; want an error naming %s", err, target)
	}
	if names := dirEntries(t, dir); len(names) != 1 || names[0] != "r.json" {
		t.Errorf("directory holds %q; want only the r.json directory", names)
	}
}

func TestReadJSONFileRejects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"other schema", `{"schema":"rpcload.result/v0","requests":{"sent":1}}`, []string{`"rpcload.result/v0"`, `"` + Schema + `"`}},
		{"future schema", `{"schema":"rpcload.result/v2"}`, []string{`"rpcload.result/v2"`, `"` + Schema + `"`}},
		{"no schema", `{"requests":{"sent":1}}`, []string{`schema ""`, Schema}},
		{"not JSON", "target http://x\nrequests sent 1\n", []string{"is not a result file"}},
		{"empty", "", []string{"is not a result file"}},
		{"array", `[{"schema":"` + Schema + `"}]`, []string{"is not a result file"}},
		{"wrong type", `{"schema":"` + Schema + `","requests":{"sent":"many"}}`, []string{"is not a result file"}},
		{"truncated", `{"schema":"` + Schema + `","requests":{"se`, []string{"is not a result file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := ReadJSONFile(path)
			if err == nil {
				t.Fatalf("ReadJSONFile accepted %q: %+v", tc.content, r)
			}
			for _, w := range append(tc.want, "stats: ", path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := ReadJSONFile(filepath.Join(dir, "absent.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v; want ErrNotExist", err)
	}
}

// FuzzReadResult feeds arbitrary bytes to ReadJSONFile. It must not panic;
// what it accepts has the current schema, and survives being written and
// read again unchanged (what we read, we can write).
func FuzzReadResult(f *testing.F) {
	f.Add([]byte(`{"schema":"` + Schema + `"}`))
	f.Add([]byte(`{"schema":"` + Schema + `","requests":{"sent":3,"ok":2},"methods":{"m":{"violations":{"unknown_id":1}}},"series":[{"t_s":1.5}]}`))
	f.Add([]byte(`{"schema":"` + Schema + `","settings":{"a":[1,"x",null,{"b":true}]},"violation_samples":{"r":[{"frame":"\u0000"}]}}`))
	f.Add([]byte(`{"schema":"other"}`))
	f.Add([]byte(`{"SCHEMA":"` + Schema + `","schema":"x"}`))
	f.Add([]byte("not json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadJSONFile(path)
		if err != nil {
			if r != nil {
				t.Fatalf("ReadJSONFile returned a result with error %v", err)
			}
			return
		}
		if r.Schema != Schema {
			t.Fatalf("accepted schema %q", r.Schema)
		}
		// Encode as WriteJSONFile does, without its fsync (slow, and tested
		// above).
		enc, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatalf("cannot write back what was read: %v", err)
		}
		out := filepath.Join(dir, "out.json")
		if err := os.WriteFile(out, enc, 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := ReadJSONFile(out)
		if err != nil {
			t.Fatalf("cannot read back what was written: %v", err)
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("write and read changed the result\n got %+v\nwant %+v", again, r)
		}
	})
}
