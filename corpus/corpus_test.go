package corpus

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/oracle"
)

// TestEveryFileParses holds every embedded file to the format of README.md:
// .json or .jsonl, at least one message, no newline inside a message, valid
// UTF-8, and valid JSON exactly when the name does not say invalid-json.
func TestEveryFileParses(t *testing.T) {
	n := 0
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		if !strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".jsonl") {
			t.Errorf("%s: a seed file ends in .json or .jsonl", name)
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		frames := SplitFrames(name, data)
		if len(frames) == 0 {
			t.Errorf("%s: no message", name)
		}
		if strings.HasSuffix(name, ".jsonl") && len(frames) < 2 {
			t.Errorf("%s: a sequence of %d message; use .json", name, len(frames))
		}
		invalid := strings.Contains(name, "invalid-json")
		for i, f := range frames {
			if bytes.ContainsAny(f, "\r\n") {
				t.Errorf("%s message %d: contains a line break; newline framing forbids it", name, i)
			}
			if !utf8.Valid(f) {
				t.Errorf("%s message %d: not UTF-8", name, i)
			}
			if json.Valid(f) == invalid {
				t.Errorf("%s message %d: json.Valid = %v, but the name says invalid-json = %v", name, i, !invalid, invalid)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(Seeds("")); got != n {
		t.Errorf("Seeds(\"\") has %d seeds for %d files", got, n)
	}
}

func TestSeedsPerProfile(t *testing.T) {
	for _, p := range Profiles() {
		seeds := Seeds(p)
		count := map[string]int{}
		for _, s := range seeds {
			count[s.Profile]++
			if !strings.HasPrefix(s.Name, s.Profile+"/") {
				t.Errorf("seed %s has profile %s", s.Name, s.Profile)
			}
		}
		if count["jsonrpc"] == 0 || count["tricky"] == 0 || count[p] == 0 {
			t.Errorf("Seeds(%s) draws %v; want jsonrpc, tricky and its own", p, count)
		}
		for other := range count {
			if other != "jsonrpc" && other != "tricky" && other != p {
				t.Errorf("Seeds(%s) holds %d %s seeds", p, count[other], other)
			}
		}
	}
	if s := Seeds("grpc"); s != nil {
		t.Errorf("Seeds(grpc) = %d seeds; want nil", len(s))
	}
	if !slices.Equal(Profiles(), []string{"jsonrpc", "mcp", "lsp", "eth"}) {
		t.Errorf("Profiles() = %v", Profiles())
	}
}

// TestSeedsClassify checks that each seed is what its name says, judged by
// the fuzz oracle's own classifier: tricky seeds are valid requests, and so
// is everything the profiles send except the named error cases.
func TestSeedsClassify(t *testing.T) {
	valid := func(c oracle.RequestClass) bool {
		return c == oracle.Call || c == oracle.Notification || c == oracle.Batch
	}
	for _, s := range Seeds("") {
		base := s.Name[strings.LastIndexByte(s.Name, '/')+1:]
		for i, f := range s.Frames {
			c := oracle.ClassifyRequest(f)
			var ok bool
			switch {
			case strings.HasPrefix(base, "invalid-json"):
				ok = c == oracle.ParseError
			case strings.HasPrefix(base, "invalid-request"):
				ok = c == oracle.InvalidRequest || c == oracle.InvalidParams
			case base == "batch-empty.json":
				ok = c == oracle.EmptyBatch
			case strings.HasPrefix(base, "batch-"):
				ok = c == oracle.Batch
			case strings.HasPrefix(base, "call-"):
				ok = c == oracle.Call
			case strings.HasPrefix(base, "notification-"):
				ok = c == oracle.Notification
			default:
				ok = valid(c)
			}
			if !ok {
				t.Errorf("%s message %d is %s", s.Name, i, c)
			}
			if s.Profile == "tricky" && c == oracle.Batch {
				for off := 0; ; {
					elem, next, more := elementOf(f, off)
					if !more {
						break
					}
					if ec := oracle.ClassifyRequest(elem); !valid(ec) || ec == oracle.Batch {
						t.Errorf("%s: batch element %s is %s", s.Name, elem, ec)
					}
					off = next
				}
			}
		}
	}
}

// elementOf is a tiny batch iterator for the test, independent of the
// package under test: it decodes the array and returns element i = off.
func elementOf(frame []byte, off int) ([]byte, int, bool) {
	var elems []json.RawMessage
	if json.Unmarshal(frame, &elems) != nil || off >= len(elems) {
		return nil, off, false
	}
	return elems[off], off + 1, true
}

// TestMCPIDs: MCP wants request ids that are strings or integers.
func TestMCPIDs(t *testing.T) {
	for _, s := range Seeds("mcp") {
		if s.Profile != "mcp" {
			continue
		}
		for i, f := range s.Frames {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(f, &m); err != nil {
				t.Fatalf("%s message %d: %v", s.Name, i, err)
			}
			if m.ID != nil && (string(m.ID) == "null" || bytes.ContainsAny(m.ID, ".eE") && m.ID[0] != '"') {
				t.Errorf("%s message %d: id %s is not a string or an integer", s.Name, i, m.ID)
			}
		}
	}
}

func TestMethods(t *testing.T) {
	for _, tc := range []struct {
		profile   string
		want, not []string
	}{
		{"jsonrpc", []string{"add", "echo", "get_time", "teleport", "überprüfen_数据", "log_event"}, []string{"initialize", "eth_call"}},
		{"mcp", []string{"initialize", "notifications/initialized", "server/discover", "tools/list", "tools/call", "ping", "notifications/cancelled", "echo"}, []string{"textDocument/hover"}},
		{"lsp", []string{"initialize", "initialized", "textDocument/didOpen", "textDocument/hover", "textDocument/documentSymbol", "shutdown", "exit", "$/cancelRequest"}, []string{"tools/list"}},
		{"eth", []string{"eth_blockNumber", "eth_call", "eth_getBalance", "eth_chainId", "eth_getLogs", "rpc.discover"}, []string{"initialize"}},
	} {
		got := Methods(tc.profile)
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("Methods(%s) is not sorted and unique: %v", tc.profile, got)
		}
		for _, m := range tc.want {
			if !slices.Contains(got, m) {
				t.Errorf("Methods(%s) lacks %q", tc.profile, m)
			}
		}
		for _, m := range tc.not {
			if slices.Contains(got, m) {
				t.Errorf("Methods(%s) has %q", tc.profile, m)
			}
		}
	}
	// The escaped spelling in tricky/ decodes to the plain name.
	if slices.Contains(Methods(""), `\u0065\u0063\u0068\u006f`) {
		t.Error("Methods returns an undecoded name")
	}
	if m := Methods("grpc"); m != nil {
		t.Errorf("Methods(grpc) = %v; want nil", m)
	}
}

func TestSeedsAreCopies(t *testing.T) {
	a := Seeds("eth")
	a[0].Frames[0][0] = 'X'
	a[0].Frames = nil
	b := Seeds("eth")
	if b[0].Frames == nil || b[0].Frames[0][0] == 'X' {
		t.Error("a change to one Seeds result shows in the next")
	}
}

func TestSplitFrames(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"a.json", "{}\n", []string{"{}"}},
		{"a.json", "{}\r\n", []string{"{}"}},
		{"a.json", "{}", []string{"{}"}},
		{"a.json", "", nil},
		{"a.json", "\n", nil},
		{"a.json", " {} \n\n", []string{" {} \n"}},
		{"a.jsonl", "{}\n[]\n", []string{"{}", "[]"}},
		{"a.jsonl", "{}\r\n\n  \n[1]", []string{"{}", "[1]"}},
		{"a.jsonl", "\n\n", nil},
		{"a.jsonl", " 1 \n", []string{" 1 "}},
	} {
		got := SplitFrames(tc.name, []byte(tc.data))
		if len(got) != len(tc.want) {
			t.Errorf("SplitFrames(%s, %q) = %q; want %q", tc.name, tc.data, got, tc.want)
			continue
		}
		for i := range got {
			if string(got[i]) != tc.want[i] {
				t.Errorf("SplitFrames(%s, %q)[%d] = %q; want %q", tc.name, tc.data, i, got[i], tc.want[i])
			}
		}
	}
}

// FuzzSplitFrames: never panics; .jsonl frames are non-empty, hold no LF
// and are pieces of the data in order; a .json file is at most one frame.
func FuzzSplitFrames(f *testing.F) {
	f.Add([]byte("{}\n[]\n"), true)
	f.Add([]byte("{\"a\":1}\r\n"), false)
	f.Add([]byte("\n\r\n \n"), true)
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool) {
		name := "f.json"
		if jsonl {
			name += "l"
		}
		frames := SplitFrames(name, data)
		if !jsonl {
			if len(frames) > 1 || len(frames) == 1 && !bytes.HasPrefix(data, frames[0]) {
				t.Fatalf("SplitFrames(%q) = %q", data, frames)
			}
			return
		}
		rest := data
		for _, fr := range frames {
			if len(fr) == 0 || bytes.ContainsAny(fr, "\n") {
				t.Fatalf("frame %q of %q", fr, data)
			}
			i := bytes.Index(rest, fr)
			if i < 0 {
				t.Fatalf("frame %q is not in %q in order", fr, data)
			}
			rest = rest[i+len(fr):]
		}
	})
}
