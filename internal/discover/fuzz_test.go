package discover

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// FuzzDiscover: any document never panics, and what is written is YAML.
func FuzzDiscover(f *testing.F) {
	for _, name := range []string{"testdata/openrpc.json", "testdata/tools.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"methods":[{"name":"a","params":[{"name":"$x","schema":{"$ref":"#/components/schemas/a"}}]}],"components":{"schemas":{"a":{"$ref":"#/components/schemas/a"}}}}`))
	f.Add([]byte(`{"tools":[{"name":"t","inputSchema":{"$ref":"#"}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 1<<14 {
			return
		}
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
		}()
		for _, fn := range []func() ([]byte, error){
			func() ([]byte, error) { return FromOpenRPC(doc, "", rand.New(rand.NewPCG(1, 2))) },
			func() ([]byte, error) { return FromMCP(MCPLists{Tools: doc}, "", "", rand.New(rand.NewPCG(1, 2))) },
		} {
			out, err := fn()
			if err != nil {
				continue
			}
			var n yaml.Node
			if err := yaml.Unmarshal(out, &n); err != nil {
				t.Fatalf("not YAML: %v\n%s", err, out)
			}
		}
	})
}

// TestCommentBlockPrintable: a description with characters YAML does not
// allow in a file (DEL, C1 controls, a byte-order mark, a line break)
// still makes a scenario that parses: the comment shows them as '·' or a
// space (FuzzDiscover found DEL in a tool description).
func TestCommentBlockPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\x7fb", "# a·b"},
		{"a\u0085b\u0090c", "# a b·c"},
		{"x\ny\r\tz", "# x y  z"},
		{"\ufeffé😀", "# ·é😀"},
	} {
		got := commentBlock([]string{tc.in})
		if got != tc.want {
			t.Errorf("commentBlock(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var v any
		if err := yaml.Unmarshal([]byte(got+"\nk: 1\n"), &v); err != nil {
			t.Errorf("%q: not YAML: %v", got, err)
		}
	}
}
