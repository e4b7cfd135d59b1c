package fuzz

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
	"github.com/rpcload/rpcload/internal/transport"
)

func TestParseBaseline(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		err      string
	}{
		{"ids", "crash-0123456789\n# comment\n\n  hang-abcdefabcd  # trailing\n", []string{"crash-0123456789", "hang-abcdefabcd"}, ""},
		{"empty", "", nil, ""},
		{"bad id", "crash-0123456789\ncrash\n", nil, "accepted.txt:2: \"crash\" is not a finding id"},
		{"summary", `{"schema":"rpcfuzz.summary/v1","findings":[{"id":"crash-0123456789"}],"baselined":[{"id":"hang-abcdefabcd"}]}`,
			[]string{"crash-0123456789", "hang-abcdefabcd"}, ""},
		{"other json", `{"schema":"rpcload.result/v1"}`, nil, `schema "rpcload.result/v1"`},
		{"broken json", `{"schema":`, nil, "not a summary.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, err := ParseBaseline([]byte(tc.in), "accepted.txt")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for id := range ids {
				got = append(got, id)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ids %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzParseBaseline: any input gives ids of the finding form or an error.
func FuzzParseBaseline(f *testing.F) {
	f.Add([]byte("crash-0123456789\n# x\n"))
	f.Add([]byte(`{"schema":"rpcfuzz.summary/v1","findings":[{"id":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ids, err := ParseBaseline(data, "f")
		if err != nil {
			return
		}
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			return // ids from a summary are taken as written
		}
		for id := range ids {
			if !idPattern.MatchString(id) {
				t.Fatalf("id %q from %q", id, data)
			}
		}
	})
}

func TestCaseFile(t *testing.T) {
	for _, c := range []mutate.Case{
		frames(call1),
		frames("\xff\xfe", "", `{"a":"\n"}`),
		{Frames: [][]byte{[]byte(call1)}, Wire: []byte("Content-Length: 3\r\n\r\n{}")},
	} {
		data, err := encodeCase(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeCase(data, "case.json")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Frames) != len(c.Frames) || !bytes.Equal(got.Wire, c.Wire) {
			t.Fatalf("round trip of %q: %q", c.Frames, got.Frames)
		}
		for i := range c.Frames {
			if !bytes.Equal(got.Frames[i], c.Frames[i]) {
				t.Errorf("frame %d: %q, want %q", i, got.Frames[i], c.Frames[i])
			}
		}
	}
	for _, bad := range []string{`{}`, `{"schema":"rpcfuzz.case/v1","frames":[]}`, `{"schema":"rpcfuzz.case/v1","frames":[{"base64":"%%"}]}`, `[`} {
		if _, err := decodeCase([]byte(bad), "case.json"); err == nil || !strings.Contains(err.Error(), "case.json") {
			t.Errorf("decodeCase(%s): err %v, want one naming the file", bad, err)
		}
	}
}

// FuzzDecodeCase: a case file that decodes encodes back to the same case.
func FuzzDecodeCase(f *testing.F) {
	data, _ := encodeCase(frames(call1, "\xff"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCase(data, "f")
		if err != nil {
			return
		}
		again, err := encodeCase(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := decodeCase(again, "f")
		if err != nil || len(c2.Frames) != len(c.Frames) || !bytes.Equal(c2.Wire, c.Wire) {
			t.Fatalf("%q does not come back: %v", data, err)
		}
	})
}

// TestPrintfReproducer runs the printf of a reproducer line through the
// shell: it must print the input's exact bytes.
func TestPrintfReproducer(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	in := []byte("{\"a\":\"%d \\\\ 'q' \x00\x01\xff\"}\r\n\t")
	out, err := exec.Command(sh, "-c", "printf '"+printfEscape(in)+"'").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, in) {
		t.Errorf("printf printed %q, want %q", out, in)
	}
	for s, want := range map[string]string{"abc/d.json": "abc/d.json", "a b": "'a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := ShellQuote(s); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestReproducers(t *testing.T) {
	c := frames(call1)
	for _, tc := range []struct {
		url  string
		cmd  []string
		want string
	}{
		{url: "http://127.0.0.1:8545/rpc", want: "curl -sS -H 'Content-Type: application/json' --data-binary @out/f/input.bin http://127.0.0.1:8545/rpc"},
		{url: "tcp://127.0.0.1:9090", want: `printf '` + printfEscape([]byte(call1+"\n")) + `' | nc 127.0.0.1 9090`},
		{url: "unix:///tmp/s.sock", want: `printf '` + printfEscape([]byte(call1+"\n")) + `' | nc -U /tmp/s.sock`},
		{url: "ws://127.0.0.1:1/ws", want: "websocat ws://127.0.0.1:1/ws < out/f/input.bin"},
		{cmd: []string{"my server", "--stdio"}, want: `printf '` + printfEscape([]byte(call1+"\n")) + `' | 'my server' --stdio`},
	} {
		var tg transport.Target
		var err error
		if tc.cmd != nil {
			tg, err = transport.CommandTarget(tc.cmd, transport.Newline)
		} else {
			tg, err = transport.ParseTarget(tc.url)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := reproducers(tg, "out/f", c)
		if len(got) != 2 || got[0] != "rpcfuzz replay out/f" || got[1] != tc.want {
			t.Errorf("%s%s:\n got %q\nwant %q", tc.url, tc.cmd, got, tc.want)
		}
	}
	big := frames(strings.Repeat("x", printfMax+1))
	tg, _ := transport.ParseTarget("tcp://127.0.0.1:9090")
	if got := reproducers(tg, "f", big)[1]; got != "cat f/input.bin | nc 127.0.0.1 9090" {
		t.Errorf("big input: %s", got)
	}
}

// TestExportImportGo writes a finding as a Go corpus file and reads it
// back as a finding with the same input.
func TestExportImportGo(t *testing.T) {
	dir := t.TempDir()
	c := mutate.Case{Frames: [][]byte{[]byte(call1), []byte("\xff")}}
	fdir := filepath.Join(dir, "run", "crash-0123456789")
	f := &Finding{ID: "crash-0123456789", Rule: "crash", Target: TargetInfo{URL: "tcp://127.0.0.1:1", Framing: "newline"}}
	if err := writeFindingDir(fdir, f, c, nil); err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(dir, "pkg", "testdata", "fuzz", "FuzzServer")
	done, err := ExportGo(filepath.Join(dir, "run"), corpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || !strings.Contains(done[0].GoTest, "go test -run '^FuzzServer$/^crash-0123456789$' .") ||
		!strings.Contains(done[0].GoTest, filepath.Join(dir, "pkg")) {
		t.Fatalf("exported %+v", done)
	}
	file, err := os.ReadFile(filepath.Join(corpus, "crash-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := fuzzcase.UnmarshalGoCorpus(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := fuzzcase.Decode(data); !ok || len(got.Frames) != 2 || !bytes.Equal(got.Frames[1], []byte("\xff")) {
		t.Fatalf("corpus file holds %q", data)
	}
	if f2, _, err := ReadFinding(fdir); err != nil || f2.GoTest != done[0].GoTest {
		t.Errorf("finding.json go_test %q (%v)", f2.GoTest, err)
	}
	// A choice stream imports as the messages the native harness expands
	// it to under the same options; a file that is no corpus file is
	// skipped.
	opts := native.Options{Methods: []string{"add"}, Framing: mutate.FramingNewline}
	stream := []byte("\x03choices of a fuzz test")
	if err := os.WriteFile(filepath.Join(corpus, "stream"), fuzzcase.MarshalGoCorpus(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corpus, "junk"), []byte("not a corpus file"), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, err := native.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][][]byte{"crash-0123456789": c.Frames, "stream": exp.Expand(stream).Case.Frames}
	imported, err := ImportGo(corpus, filepath.Join(dir, "imported"), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	var dirs, skipped int
	for _, im := range imported {
		if im.Skipped != "" {
			skipped++
			continue
		}
		dirs++
		f3, c3, err := ReadFinding(im.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[filepath.Base(im.File)]; f3.Rule != "" || !slices.EqualFunc(c3.Frames, w, bytes.Equal) || len(w) == 0 {
			t.Errorf("%s imported as %+v %q, want %q", im.File, f3, c3.Frames, w)
		}
	}
	if dirs != 2 || skipped != 1 {
		t.Errorf("imported %d, skipped %d; want 2 and 1", dirs, skipped)
	}
	if _, err := ExportGo(filepath.Join(dir, "run"), filepath.Join(dir, "notfuzz")); err == nil || !strings.Contains(err.Error(), "FuzzXxx") {
		t.Errorf("export to a directory not named Fuzz...: %v", err)
	}
	if _, err := ExportGo(dir, corpus); err == nil || !strings.Contains(err.Error(), "holds no findings") {
		t.Errorf("export of a directory without findings: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	tg, _ := transport.ParseTarget("tcp://127.0.0.1:1")
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Execs, c.Duration = 0, 0 }, "give --duration or --execs"},
		{func(c *Config) { c.Workers = 2000 }, "--workers"},
		{func(c *Config) { c.SlowFactor = 0.5 }, "--slow-factor"},
		{func(c *Config) { c.MaxFrame = 10 }, "--max-frame"},
		{func(c *Config) { c.OutDir = "" }, "--out"},
		{func(c *Config) { c.MaxRestarts = -1 }, "--max-restarts"},
		{func(c *Config) { c.StopAfter = -1 }, "--stop-after"},
		{func(c *Config) { c.Duration = -time.Second }, "--duration"},
		{func(c *Config) { c.Profile = "soap" }, "unknown profile"},
	} {
		c := Config{Target: tg, Execs: 1, OutDir: t.TempDir()}
		tc.mod(&c)
		err := c.fill()
		if err == nil {
			_, err = newDialer(&c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
}

func TestCorpusBounds(t *testing.T) {
	seeds := []mutate.Case{frames("a"), frames("b")}
	w := newWorkCorpus(seeds, 4, 100)
	ch := mutate.NewRand(1)
	for i := range 50 {
		w.add(ch, frames(strings.Repeat("x", i%30)), 0)
	}
	if w.len() != 4 || w.bytes > 100 {
		t.Errorf("%d entries, %d bytes", w.len(), w.bytes)
	}
	if string(w.entries[0].c.Frames[0]) != "a" || string(w.entries[1].c.Frames[0]) != "b" {
		t.Error("a seed was replaced")
	}
	tuples := newTupleSet(3)
	if !tuples.add([]tuple{{code: 1}, {code: 2}}) || tuples.add([]tuple{{code: 1}}) || !tuples.add([]tuple{{code: 3}, {code: 4}}) || tuples.len() != 3 {
		t.Errorf("tuple set: %d", tuples.len())
	}
	r := recentRing{max: 3, maxBytes: 10}
	for _, s := range []string{"1", "22", "333", "4444", "55555555555"} {
		r.push(frames(s))
	}
	var got []string
	for _, c := range r.newestFirst() {
		got = append(got, string(c.Frames[0]))
	}
	if !slices.Equal(got, []string{"4444", "333", "22"}) {
		t.Errorf("recent %q", got)
	}
}

// TestConfigDefaults: the defaults fill leaves for fields the caller did
// not set, and the one it raises (a reply must hold the echo of the
// largest input).
func TestConfigDefaults(t *testing.T) {
	tcp, _ := transport.ParseTarget("tcp://127.0.0.1:1")
	child, err := transport.CommandTarget([]string{"true"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		in       Config
		workers  int
		maxReply int
	}{
		{"network target", Config{Target: tcp}, DefaultWorkers, DefaultMaxReply},
		{"child process", Config{Target: child}, 1, DefaultMaxReply},
		{"given", Config{Target: tcp, Workers: 3, MaxFrame: 512, MaxReply: 1 << 10}, 3, 1 << 10},
		{"max reply below max frame", Config{Target: tcp, MaxFrame: 4 << 20, MaxReply: 1 << 20}, DefaultWorkers, 4 << 20},
	} {
		c := tc.in
		c.Execs, c.OutDir = 1, t.TempDir()
		if err := c.fill(); err != nil || c.Workers != tc.workers || c.MaxReply != tc.maxReply {
			t.Errorf("%s: workers %d, max reply %d (%v); want %d, %d", tc.name, c.Workers, c.MaxReply, err, tc.workers, tc.maxReply)
		}
	}
}
