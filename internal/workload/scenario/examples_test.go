package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// exampleFiles lists the scenarios/*.yaml files of the repository.
func exampleFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("../../../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scenarios found (%v)", err)
	}
	return files
}

// noEnv is a getenv with no variables.
func noEnv(string) (string, bool) { return "", false }

func TestExamplesLoad(t *testing.T) {
	for _, f := range exampleFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := Load(f, noEnv)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if s.Version != 1 || len(s.Mix) == 0 {
				t.Fatalf("version %d, %d calls", s.Version, len(s.Mix))
			}
			if s.Target == "" && s.Command == nil {
				t.Errorf("neither target nor command: an example must run as written")
			}
		})
	}
}

// formatSchema compiles docs/scenario.schema.json.
func formatSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("../../../docs/scenario.schema.json")
	if err != nil {
		t.Fatalf("compile docs/scenario.schema.json: %v", err)
	}
	return sch
}

// yamlInstance decodes YAML into what the schema library validates.
func yamlInstance(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	return inst
}

func TestExamplesMatchFormatSchema(t *testing.T) {
	sch := formatSchema(t)
	for _, f := range exampleFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(yamlInstance(t, data)); err != nil {
			t.Errorf("%s does not match docs/scenario.schema.json: %v", filepath.Base(f), err)
		}
	}
}

// TestFormatSchemaRejects checks that the JSON Schema catches, as the
// loader does, the mistakes an editor should flag.
func TestFormatSchemaRejects(t *testing.T) {
	sch := formatSchema(t)
	for _, src := range []string{
		"mix: [{method: a}]",                                     // no version
		"version: 2\nmix: [{method: a}]",                         // wrong version
		"version: 1\nmix: []",                                    // empty mix
		"version: 1\nmix: [{name: a}]",                           // no method
		"version: 1\nmix: [{method: a, wieght: 2}]",              // unknown key
		"version: 1\nmix: [{method: a, weight: 0}]",              // weight 0
		"version: 1\nmix: [{method: a, params: 5}]",              // scalar params
		"version: 1\nmix: [{method: a, params: {$int: [1, 2]}}]", // a scalar generator as params
		"version: 1\nmix: [{method: a, notify: true, expect: {error_code: 1}}]",
		"version: 1\nmix: [{method: a, notify: true, batch: 2}]",
		"version: 1\nmix: [{method: a, expect: {error_code: 1, result_equals: 2}}]",
		"version: 1\ntarget: tcp://h:1\ncommand: [x]\nmix: [{method: a}]",
		"version: 1\nload: {rate: 5, concurrency: 2}\nmix: [{method: a}]",
		"version: 1\nload: {rate: -1}\nmix: [{method: a}]",
		"version: 1\nload: {rate: 5, stages: [{duration: 1s, rate: 1}]}\nmix: [{method: a}]",
		"version: 1\nload: {stages: [{duration: 1s, rate: 1}, {duration: 1s, concurrency: 1}]}\nmix: [{method: a}]",
		"version: 1\nload: {duration: 10}\nmix: [{method: a}]",
		"version: 1\nload: {concurrency: 2, arrival: poisson}\nmix: [{method: a}]",
		"version: 1\nprofile: {name: mcp, open: x.go}\nmix: [{method: a}]",
		"version: 1\nprofile: soap\nmix: [{method: a}]",
		"version: 1\ntransport: {max_frame: 16XB}\nmix: [{method: a}]",
		"version: 1\nfeeders: {a: {mode: random}}\nmix: [{method: a}]",
		"version: 1\nmix: [{raw: x, method: a}]",
		"version: 1\nmix: [{raw: {hex: '00'}}]",
		"version: 1\nmix: [{method: a, mutate: {ops: [x]}}]",
		"version: 1\nmix: [{method: a, mutate: {fraction: 0}}]",
		"version: 1\nmix: [{method: a, batch: 2, mutate: {fraction: 1}}]",
	} {
		if err := sch.Validate(yamlInstance(t, []byte(src))); err == nil {
			t.Errorf("the format schema accepts %q", src)
		}
		if _, err := Parse("s.yaml", []byte(src), t.TempDir(), noEnv); err == nil {
			t.Errorf("Parse accepts %q", src)
		}
	}
}
