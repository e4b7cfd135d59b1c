package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// TestReadJSONFileWhere checks that a bad result file's error says where
// the problem is: the line and column of a syntax error, the JSON path of
// a value of the wrong type, and the version for another schema (even when
// the rest of the file would not decode either).
func TestReadJSONFileWhere(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"syntax", "{\n  \"schema\": \"" + Schema + "\",\n  \"requests\": {\"sent\": 1,,}\n}", []string{"line 3, column 26", "invalid character ','"}},
		{"type", "{\"schema\": \"" + Schema + "\",\n\"requests\": {\"sent\": \"many\"}}", []string{"$.requests.sent", "line 2", "a JSON string where a number (uint64) was expected"}},
		{"other schema, other shape", `{"schema":"rpcload.result/v2","requests":[1,2]}`, []string{`schema "rpcload.result/v2"`, "this rpcload reads", "another rpcload version"}},
		{"schema not a string", `{"schema":2}`, []string{"$.schema", "a JSON number where a string was expected"}},
		{"blank", " \n\t", []string{"the file is empty"}},
		{"no schema member", `{"target":"x"}`, []string{`no "schema" member`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadJSONFile(path)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLineCol(t *testing.T) {
	data := []byte("ab\ncd\n\nef")
	for _, tc := range []struct {
		off             int64
		wantLn, wantCol int
	}{{0, 1, 1}, {1, 1, 1}, {2, 1, 2}, {4, 2, 1}, {5, 2, 2}, {7, 3, 1}, {8, 4, 1}, {9, 4, 2}, {10, 4, 2}, {99, 4, 2}, {-3, 1, 1}} {
		if ln, col := lineCol(data, tc.off); ln != tc.wantLn || col != tc.wantCol {
			t.Errorf("lineCol(%d) = %d:%d, want %d:%d", tc.off, ln, col, tc.wantLn, tc.wantCol)
		}
	}
}

// TestAbortWrites: after AbortWrites, a write in progress leaves neither
// its file nor its temporary file, and later writes fail without touching
// their paths; an earlier, complete file stays as it was.
func TestAbortWrites(t *testing.T) {
	t.Cleanup(resetAbort)
	dir := t.TempDir()
	done := filepath.Join(dir, "done.json")
	if err := WriteFileAtomic(done, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	// A write caught between its temporary file and its rename.
	f, err := createTracked(filepath.Join(dir, "late.json"))
	if err != nil {
		t.Fatal(err)
	}
	inProgress := f.Name()
	if _, err := f.WriteString("{\"half"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	removed := AbortWrites()
	if len(removed) != 1 || removed[0] != inProgress {
		t.Errorf("AbortWrites removed %q, want [%s]", removed, inProgress)
	}
	if err := commit(inProgress, filepath.Join(dir, "late.json")); !errors.Is(err, ErrAborted) {
		t.Errorf("commit after abort: %v, want ErrAborted", err)
	}
	err = WriteFileAtomic(filepath.Join(dir, "after.json"), []byte("{}"))
	if !errors.Is(err, ErrAborted) {
		t.Errorf("write after abort: %v, want ErrAborted", err)
	}
	if names := dirEntries(t, dir); len(names) != 1 || names[0] != "done.json" {
		t.Errorf("directory holds %q; want only done.json", names)
	}
}

func TestRedactor(t *testing.T) {
	const secret = `s3cr<e>t+"tok/en"&x`
	r := NewRedactor(secret, "short", "")
	if !r.Active() {
		t.Fatal("not active")
	}
	jsonForm, _ := json.Marshal(secret)
	for _, tc := range []struct{ name, in string }{
		{"raw", "token " + secret + " end"},
		{"json", `{"h":` + string(jsonForm) + `}`},
		{"html", "<td>" + "s3cr&lt;e&gt;t&#43;&#34;tok/en&#34;&amp;x" + "</td>"},
		{"html.EscapeString", "s3cr&lt;e&gt;t+&#34;tok/en&#34;&amp;x"},
		{"quoted", `"s3cr<e>t+\"tok/en\"&x"`},
		{"query", "a=s3cr%3Ce%3Et%2B%22tok%2Fen%22%26x"},
	} {
		got := r.String(tc.in)
		if !strings.Contains(got, Redacted) {
			t.Errorf("%s: %q not redacted: %q", tc.name, tc.in, got)
		}
		if strings.Contains(got, "s3cr") {
			t.Errorf("%s: part of the secret left in %q", tc.name, got)
		}
		if b := r.Bytes([]byte(tc.in)); string(b) != got {
			t.Errorf("%s: Bytes %q, String %q", tc.name, b, got)
		}
	}
	if got := r.String("a short one"); got != "a short one" {
		t.Errorf("a value under MinSecretLen was redacted: %q", got)
	}
	var none *Redactor
	if none.Active() || none.String("x") != "x" || NewRedactor().Active() {
		t.Error("a nil or empty Redactor changes something")
	}
}

// TestRedactingWriter splits a secret across writes at every place: it
// never reaches the underlying writer, and everything else does, in order.
func TestRedactingWriter(t *testing.T) {
	const secret = "Bearer abcdef123456"
	text := "x-" + secret + "-y " + secret + "\n" + "Bear" // ends in the start of a secret
	r := NewRedactor(secret)
	want := "x-" + Redacted + "-y " + Redacted + "\nBear"
	for cut := 0; cut <= len(text); cut++ {
		for cut2 := cut; cut2 <= len(text); cut2 += 3 {
			var out bytes.Buffer
			w := r.Writer(&out)
			for _, part := range []string{text[:cut], text[cut:cut2], text[cut2:]} {
				if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("cuts %d,%d: got %q, want %q", cut, cut2, out.String(), want)
			}
		}
	}
	var out bytes.Buffer
	w := NewRedactor().Writer(&out)
	w.Write([]byte("plain"))
	if out.String() != "plain" || w.Underlying() != &out {
		t.Errorf("inactive writer: %q", out.String())
	}
}

// TestFileRedactor: with a file redactor set, every atomic write scrubs.
func TestFileRedactor(t *testing.T) {
	SetFileRedactor(NewRedactor("hunter2-secret"))
	t.Cleanup(func() { SetFileRedactor(nil) })
	path := filepath.Join(t.TempDir(), "r.json")
	r := &Result{Schema: Schema, Target: "http://u:hunter2-secret@h/", Warnings: []string{"echo hunter2-secret"}}
	if err := WriteJSONFile(path, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("hunter2")) || !bytes.Contains(b, []byte(Redacted)) {
		t.Errorf("file not redacted:\n%s", b)
	}
	if _, err := ReadJSONFile(path); err != nil {
		t.Errorf("the redacted file does not read back: %v", err)
	}
}

func TestSecretValues(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer tok-123456")
	h.Set("X-Api-Key", "key-abcdef")
	h.Set("X-Custom", "custom-value")
	h.Set("Accept", "application/json")
	got := SecretValues(h, []string{"x-custom"})
	slices.Sort(got)
	want := []string{"Bearer tok-123456", "custom-value", "key-abcdef", "tok-123456"}
	if !slices.Equal(got, want) {
		t.Errorf("SecretValues = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"http://127.0.0.1:1/", nil},
		{"http://user:pa%40ssword@h/", []string{"pa@ssword", "pa%40ssword"}},
		{"https://tokentoken@h/", []string{"tokentoken"}},
		{"::bad", nil},
	} {
		if got := URLSecrets(tc.url); !slices.Equal(got, tc.want) {
			t.Errorf("URLSecrets(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
