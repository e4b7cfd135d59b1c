package discover

import (
	"github.com/rpcload/rpcload/internal/golden"

	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cases are the golden outputs: each document with a fixed seed.
var cases = []struct {
	golden string
	make   func(t *testing.T, seed uint64) ([]byte, error)
}{
	{"openrpc.golden.yaml", func(t *testing.T, seed uint64) ([]byte, error) {
		return FromOpenRPC(read(t, "openrpc.json"), "", rand.New(rand.NewPCG(seed, 1)))
	}},
	{"tools.golden.yaml", func(t *testing.T, seed uint64) ([]byte, error) {
		return FromMCP(MCPLists{Tools: read(t, "tools.json")}, "http://127.0.0.1:3001/mcp", "auto", rand.New(rand.NewPCG(seed, 1)))
	}},
}

func TestGolden(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, err := tc.make(t, 1)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.golden, out)
			again, _ := tc.make(t, 1)
			if !bytes.Equal(out, again) {
				t.Error("the same seed wrote a different file")
			}
		})
	}
}

// TestFromMCPPromptsAndResources: prompts become prompts/get calls with
// their required arguments generated, resources become resources/read calls,
// each named apart from the tools.
func TestFromMCPPromptsAndResources(t *testing.T) {
	lists := MCPLists{
		Tools:     []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`),
		Prompts:   []byte(`{"prompts":[{"name":"greet","description":"Says hello.","arguments":[{"name":"who","required":true},{"name":"tone"}]}]}`),
		Resources: []byte(`{"resources":[{"uri":"file:///readme","name":"readme"},{"uri":"mem://x"}]}`),
	}
	out, err := FromMCP(lists, "", "", rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"method: prompts/get", "name: prompt:greet", "who: {$string: 8}", "method: resources/read",
		"name: resource:readme", "uri: 'file:///readme'", "name: resource:mem://x", "# Says hello."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "tone") {
		t.Errorf("an optional prompt argument was filled in:\n%s", out)
	}
}

// TestFromMCPEmptyLists: a server listing no prompts (null, absent or
// empty) gives a scenario of its tools.
func TestFromMCPEmptyLists(t *testing.T) {
	for _, prompts := range []string{`{"prompts":null}`, `{}`, `{"prompts":[]}`} {
		out, err := FromMCP(MCPLists{Tools: []byte(`{"tools":[{"name":"echo"}]}`), Prompts: []byte(prompts)}, "", "", rand.New(rand.NewPCG(1, 2)))
		if err != nil || !strings.Contains(string(out), "name: echo") {
			t.Errorf("prompts %s: %v\n%s", prompts, err, out)
		}
	}
}
