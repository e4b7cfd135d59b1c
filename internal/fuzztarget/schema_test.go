package fuzztarget

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles the JSON Schema text schema (draft 2020-12 unless
// it says otherwise) at the JSON pointer fragment ("" for the root) with
// santhosh-tekuri/jsonschema, the validator rpcfuzz judges params with.
func compileSchema(t testing.TB, schema []byte, fragment string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("schema %.200s: %v", schema, err)
	}
	c := jsonschema.NewCompiler()
	const url = "mem://schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url + "#" + fragment)
	if err != nil {
		t.Fatalf("compiling %.200s#%s: %v", schema, fragment, err)
	}
	return s
}

// validate returns the validator's verdict on the JSON text value.
func validate(t testing.TB, s *jsonschema.Schema, value []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		t.Fatalf("not JSON: %.200s: %v", value, err)
	}
	return s.Validate(inst)
}

// The MCP schemas the replies are checked against: the closure of the
// $defs the replies use (JSONRPCResultResponse, JSONRPCErrorResponse,
// InitializeResult, EmptyResult, ListToolsResult, CallToolResult, and in
// 2026-07-28 DiscoverResult and UnsupportedProtocolVersionError) taken
// from the published schema-2025-11-25.json and schema-2026-07-28.json,
// descriptions dropped.
const (
	mcpSchemaLegacy = "mcp-schema-2025-11-25-subset.json"
	mcpSchemaModern = "mcp-schema-2026-07-28-subset.json"
)

// mcpSchemas compiles the definitions of one of the MCP schema subsets,
// by name.
type mcpSchemas struct {
	t    testing.TB
	text []byte
	defs map[string]*jsonschema.Schema
}

func loadMCPSchemas(t testing.TB, file string) *mcpSchemas {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return &mcpSchemas{t: t, text: b, defs: map[string]*jsonschema.Schema{}}
}

// check validates the JSON text msg against $defs/def.
func (m *mcpSchemas) check(def string, msg []byte) error {
	m.t.Helper()
	s, ok := m.defs[def]
	if !ok {
		s = compileSchema(m.t, m.text, "/$defs/"+strings.ReplaceAll(def, "/", "~1"))
		m.defs[def] = s
	}
	return validate(m.t, s, msg)
}
