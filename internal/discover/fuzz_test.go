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
