package profile

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/rpcload/rpcload/internal/wire"
)

var (
	errParamsArray     = errors.New("profile: MCP params must be an object, not an array")
	errParamsNotObject = errors.New("profile: MCP params must be an object")
	errParamsInvalid   = errors.New("profile: params are not valid JSON")
	errMetaNotObject   = errors.New("profile: params._meta must be an object")
	errMetaTwice       = errors.New("profile: params has _meta twice")
	errEraUnresolved   = errors.New("profile: the MCP era is not known yet (detect it first)")
)

// Params checks that params are an object (or absent) and, in the modern
// era, merges the reserved _meta keys into them: absent params become
// {"_meta":{...}}; an object without _meta gets one as its first member; an
// existing _meta object keeps its members (and their values, even for a
// reserved key: the scenario wins) and gets the missing reserved keys first.
// In a legacy era params are returned as they are.
func (p *mcp) Params(era Era, _ string, params []byte) ([]byte, error) {
	if !era.Modern() && !era.Legacy() {
		return nil, errEraUnresolved
	}
	t := wire.TrimSpace(params)
	if len(t) == 0 {
		if era.Legacy() {
			return params, nil
		}
		out := append([]byte(`{"_meta":{`), p.missingMeta(nil)...)
		return append(out, '}', '}'), nil
	}
	switch {
	case t[0] == '[':
		return nil, errParamsArray
	case t[0] != '{':
		return nil, errParamsNotObject
	case !validJSON(t):
		return nil, errParamsInvalid
	}
	if era.Legacy() {
		return params, nil
	}
	it, _ := wire.ObjectMembers(t)
	metaOff, empty := -1, true
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		empty = false
		if !stringIs(k, "_meta") {
			continue
		}
		if metaOff >= 0 {
			return nil, errMetaTwice
		}
		if v[0] != '{' {
			return nil, errMetaNotObject
		}
		metaOff = it.End() - len(v)
	}
	if metaOff < 0 {
		out := append([]byte(`{"_meta":{`), p.missingMeta(nil)...)
		out = append(out, '}')
		if !empty {
			out = append(out, ',')
		}
		return append(out, t[1:]...), nil
	}
	meta := t[metaOff:]
	missing := p.missingMeta(meta)
	if len(missing) == 0 {
		return params, nil
	}
	out := append([]byte(nil), t[:metaOff+1]...)
	out = append(out, missing...)
	if i := wire.SkipSpace(meta, 1); meta[i] != '}' {
		out = append(out, ',')
	}
	return append(out, t[metaOff+1:]...), nil
}

// missingMeta returns the reserved members (comma-separated) that the _meta
// object at the start of meta lacks; all of them when meta is nil.
func (p *mcp) missingMeta(meta []byte) []byte {
	var have [len(metaKeys)]bool
	if it, ok := wire.ObjectMembers(meta); ok {
		for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
			for i, name := range metaKeys {
				have[i] = have[i] || stringIs(k, name)
			}
		}
	}
	var out []byte
	for i, m := range p.metaMembers {
		if have[i] {
			continue
		}
		if len(out) > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	return out
}

// The HTTP headers of the modern Streamable HTTP transport.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
)

// Headers: in the modern era MCP-Protocol-Version (the _meta version of
// params when it is a header-safe string, so header and body agree, else the
// era's), Mcp-Method, and Mcp-Name (params.name for tools/call and
// prompts/get, params.uri for resources/read, when it is a string). In the
// legacy revisions that have the header (2025-06-18 and later),
// MCP-Protocol-Version with the negotiated revision on every request but
// initialize. Mcp-Method and Mcp-Name values that are not plain printable
// ASCII are sent in the =?base64?...?= form of SEP-2243.
func (p *mcp) Headers(era Era, method string, params []byte) []Header {
	t := wire.TrimSpace(params)
	if !validJSON(t) {
		t = nil // the readers below then find nothing
	}
	switch {
	case era.Modern():
		version := era.Version()
		if meta, ok := member(t, "_meta"); ok {
			if v, ok := stringMember(meta, metaProtocolVersion); ok && headerSafe(v) {
				version = v
			}
		}
		h := []Header{{HeaderProtocolVersion, version}, {HeaderMethod, headerValue(method)}}
		field := ""
		switch method {
		case "tools/call", "prompts/get":
			field = "name"
		case "resources/read":
			field = "uri"
		}
		if field != "" {
			if v, ok := stringMember(t, field); ok {
				h = append(h, Header{HeaderName, headerValue(v)})
			}
		}
		return h
	case era == EraLegacy || era == EraLegacy20250618:
		if method == "initialize" {
			return nil
		}
		return []Header{{HeaderProtocolVersion, era.Version()}}
	}
	return nil
}

// headerSafe reports whether v can go into a header as it is (SEP-2243):
// printable ASCII only, no leading or trailing space, and not something
// that looks like the base64 form.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	if strings.HasPrefix(v, " ") || strings.HasSuffix(v, " ") {
		return false
	}
	return !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
}

// headerValue returns v, or its =?base64?{standard base64 of the UTF-8
// bytes}?= form when v is not header-safe.
func headerValue(v string) string {
	if headerSafe(v) {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}
