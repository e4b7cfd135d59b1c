package profile

import (
	"encoding/json"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

func mustNew(t testing.TB, name Name, o Options) Profile {
	t.Helper()
	p, err := New(name, o)
	if err != nil {
		t.Fatalf("New(%q, %+v): %v", name, o, err)
	}
	return p
}

func scan(frame string) *wire.Message {
	var m wire.Message
	wire.Scan([]byte(frame), &m)
	return &m
}

// decode decodes JSON into a generic value, failing the test on error.
func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// path walks nested objects of a decoded value.
func path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// The _meta rpcload adds in the modern era with default Options.
const (
	metaPV   = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	metaCC   = `"io.modelcontextprotocol/clientCapabilities":{}`
	metaCI   = `"io.modelcontextprotocol/clientInfo":{"name":"rpcload","version":"dev"}`
	fullMeta = `{` + metaPV + `,` + metaCC + `,` + metaCI + `}`
)

// eras lists every era value, valid or not, for tables that cover them all.
var allEras = []Era{EraNone, EraAuto, EraModern, EraLegacy, EraLegacy20250618, EraLegacy20250326, EraLegacy20241105}
