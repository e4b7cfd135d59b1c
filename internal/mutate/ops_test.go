package mutate

import (
	"bytes"
	"encoding/json"
	"github.com/rpcload/rpcload/internal/jsontree"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	req    = `{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a"]}`
	named  = `{"jsonrpc":"2.0","id":"x","method":"sum","params":{"a":1,"b":{"c":2}}}`
	notif  = `{"jsonrpc":"2.0","method":"log","params":["hi"]}`
	lspIni = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}`
	lspNot = `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	mcpIni = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	mcpNot = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// opCase is one row of the op table: an input, and what every output (over
// many choice streams) must show, or that the op must not apply.
type opCase struct {
	op       string
	name     string
	env      Env
	in       Case
	notApply bool
	check    func(t *testing.T, in, out Case, env *Env)
}

func single(fn func(t *testing.T, in, out []byte, env *Env)) func(t *testing.T, in, out Case, env *Env) {
	return func(t *testing.T, in, out Case, env *Env) {
		t.Helper()
		if len(out.Frames) != len(in.Frames) || out.Wire != nil {
			t.Fatalf("frames %d -> %d, wire %v", len(in.Frames), len(out.Frames), out.Wire != nil)
		}
		changed := -1
		for i := range in.Frames {
			if !bytes.Equal(in.Frames[i], out.Frames[i]) {
				if changed >= 0 {
					t.Fatalf("frames %d and %d both changed", changed, i)
				}
				changed = i
			}
		}
		if changed < 0 {
			t.Fatalf("no frame changed: %q", out.Frames)
		}
		fn(t, in.Frames[changed], out.Frames[changed], env)
	}
}

var surrogateRe = regexp.MustCompile(`\\u[dD][89a-fA-F][0-9a-fA-F]{2}`)

// memberChanged reports the envelope members whose text differs.
func membersChanged(t *testing.T, in, out []byte) []string {
	a, b := obj(t, in), obj(t, out)
	var changed []string
	for _, m := range envelopeMembers {
		if memberText(a, m) != memberText(b, m) || countKey(a, m) != countKey(b, m) {
			changed = append(changed, m)
		}
	}
	return changed
}

func countKey(n *jsontree.Node, name string) int {
	k := 0
	for _, m := range n.Members {
		if jsontree.KeyIs(m.Key, name) {
			k++
		}
	}
	return k
}

func hasDuplicateKey(n *jsontree.Node) bool {
	dup := false
	jsontree.Walk(n, func(x *jsontree.Node, _ int) bool {
		seen := map[string]bool{}
		for _, m := range x.Members {
			if seen[string(m.Key)] {
				dup = true
			}
			seen[string(m.Key)] = true
		}
		return !dup
	})
	return dup
}

func elemCount(t *testing.T, f []byte) int {
	t.Helper()
	n, ok := parseTree(f)
	if !ok || n.Kind != jsontree.Array {
		t.Fatalf("not an array: %.200q", f)
	}
	return len(n.Elems)
}

var arraySchema = json.RawMessage(`{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}`)

var opCases = []opCase{
	{op: "content_length_lie", env: Env{Framing: FramingContentLength}, in: frames(req, notif),
		check: func(t *testing.T, in, out Case, env *Env) {
			if !equalCase(Case{Frames: in.Frames}, Case{Frames: out.Frames}) {
				t.Fatalf("frames changed")
			}
			if out.Wire == nil || bytes.Equal(out.Wire, honestWire(in, FramingContentLength)) {
				t.Fatalf("wire tells the truth: %q", out.Wire)
			}
			for _, f := range in.Frames {
				if !bytes.Contains(out.Wire, f) {
					t.Fatalf("wire lost a body: %q", out.Wire)
				}
			}
		}},
	{op: "content_length_lie", name: "newline framing", env: Env{Framing: FramingNewline}, in: frames(req), notApply: true},
	{op: "content_length_lie", name: "no framing", in: frames(req), notApply: true},
	{op: "ndjson_newline", env: Env{Framing: FramingNewline}, in: frames(req, notif),
		check: func(t *testing.T, in, out Case, env *Env) {
			honest := honestWire(in, FramingNewline)
			breaks := bytes.Count(out.Wire, []byte("\n")) + bytes.Count(out.Wire, []byte("\r"))
			if out.Wire == nil || breaks <= len(in.Frames) || len(out.Wire) <= len(honest) {
				t.Fatalf("no extra line break: %q", out.Wire)
			}
			if !bytes.HasSuffix(out.Wire, append(clone(in.Frames[1]), '\n')) && !bytes.HasPrefix(out.Wire, append(clone(in.Frames[0]), '\n')) {
				t.Fatalf("both messages changed: %q", out.Wire)
			}
		}},
	{op: "ndjson_newline", name: "content-length framing", env: Env{Framing: FramingContentLength}, in: frames(req), notApply: true},

	{op: "truncate_structural", in: frames(req, named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if len(out) == 0 || len(out) >= len(in) || !bytes.HasPrefix(in, out) {
				t.Fatalf("not a proper prefix: %q", out)
			}
			cut := len(out)
			inString := false
			lex(in, func(tk token) bool {
				if tk.kind == tokString && tk.start < cut && cut < tk.end {
					inString = true
				}
				return true
			})
			if last := out[cut-1]; !inString && !strings.ContainsRune("{[:,", rune(last)) {
				t.Fatalf("cut at %q, not structural", out)
			}
		})},
	{op: "truncate_structural", name: "a bare literal", in: frames(`true`), notApply: true},
	{op: "invalid_utf8", in: frames(req, `[1,2]`),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if utf8.Valid(out) {
				t.Fatalf("valid UTF-8: %q", out)
			}
		})},
	{op: "lone_surrogate", in: frames(req, named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if len(surrogateRe.FindAll(out, -1)) <= len(surrogateRe.FindAll(in, -1)) {
				t.Fatalf("no surrogate escape added: %q", out)
			}
			if !isJSON(out) {
				t.Fatalf("an escape was split: %q", out)
			}
		})},
	{op: "lone_surrogate", name: "no strings", in: frames(`[1,2,{}]`), notApply: true},
	{op: "bom_prefix", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !bytes.HasSuffix(out, in) || !inSet(out[:len(out)-len(in)], boms) {
				t.Fatalf("not a BOM prefix: %q", out)
			}
		})},
	{op: "control_char", in: frames(req, named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			found := false
			lex(out, func(tk token) bool {
				for _, ch := range out[tk.start:tk.end] {
					found = found || (tk.kind == tokString && ch < 0x20)
				}
				return true
			})
			if !found || len(out) != len(in)+1 {
				t.Fatalf("no raw control character in a string: %q", out)
			}
		})},
	{op: "control_char", name: "no strings", in: frames(`[1]`), notApply: true},
	{op: "nonfinite_number", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !containsAny(out, nonfiniteNumbers) || isJSON(out) {
				t.Fatalf("no non-JSON number: %q", out)
			}
		})},
	{op: "nonfinite_number", name: "only containers", in: frames(`[{},[]]`), notApply: true},
	{op: "comment", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !containsAny(out, lits("//", "/*", "#")) || len(out) <= len(in) {
				t.Fatalf("no comment: %q", out)
			}
		})},
	{op: "comment", name: "no punctuation", in: frames(`12`), notApply: true},
	{op: "trailing_comma", in: frames(req, `[1]`),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !regexp.MustCompile(`,\s*[}\]]`).Match(out) {
				t.Fatalf("no trailing comma: %q", out)
			}
		})},
	{op: "trailing_comma", name: "a scalar", in: frames(`"x"`), notApply: true},
	{op: "huge_number", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			found := false
			lex(out, func(tk token) bool {
				found = found || inSet(out[tk.start:tk.end], hugeNumbers)
				return true
			})
			if !found {
				t.Fatalf("no huge number: %q", out)
			}
		})},
	{op: "long_string", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			longest := 0
			lex(out, func(tk token) bool {
				if tk.kind == tokString {
					longest = max(longest, tk.end-tk.start)
				}
				return true
			})
			if longest < 1000 {
				t.Fatalf("longest string %d bytes", longest)
			}
		})},
	{op: "long_string", name: "clamped to MaxFrame", env: Env{MaxFrame: 200}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if len(out) > 200 || len(out) < 150 {
				t.Fatalf("length %d, want about MaxFrame 200", len(out))
			}
		})},
	{op: "long_string", name: "only member names", in: frames(`{"a":1}`), notApply: true},
	{op: "long_line", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !bytes.Contains(out, repeatBytes(' ', 1024)) && !bytes.Contains(out, repeatBytes('\t', 1024)) {
				t.Fatalf("no long run of whitespace (%d bytes)", len(out))
			}
			if !isJSON(out) || bytes.ContainsAny(out, "\n\r") {
				t.Fatalf("not one valid line")
			}
		})},
	{op: "long_line", name: "no room", env: Env{MaxFrame: len(req) + 10}, in: frames(req), notApply: true},

	{op: "envelope_absent", in: frames(req, named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			ch := membersChanged(t, in, out)
			if len(ch) != 1 || memberText(obj(t, out), ch[0]) != "" {
				t.Fatalf("changed %v: %q", ch, out)
			}
		})},
	{op: "envelope_absent", name: "no envelope member", in: frames(`{"a":1}`), notApply: true},
	{op: "envelope_absent", name: "not an object", in: frames(`[1,2]`), notApply: true},
	{op: "envelope_null", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			ch := membersChanged(t, in, out)
			if len(ch) != 1 || memberText(obj(t, out), ch[0]) != "null" {
				t.Fatalf("changed %v: %q", ch, out)
			}
		})},
	{op: "envelope_null", name: "all null already", in: frames(`{"jsonrpc":null,"id":null,"method":null,"params":null}`), notApply: true},
	{op: "envelope_type", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if ch := membersChanged(t, in, out); len(ch) != 1 {
				t.Fatalf("changed %v: %q", ch, out)
			}
		})},
	{op: "envelope_duplicate", in: frames(req, notif),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			o := obj(t, out)
			for _, name := range envelopeMembers {
				var vals []string
				for _, m := range o.Members {
					if jsontree.KeyIs(m.Key, name) {
						vals = append(vals, string(jsontree.Append(nil, m.Val)))
					}
				}
				if len(vals) == 2 && vals[0] != vals[1] {
					return
				}
			}
			t.Fatalf("no member twice with two values: %q", out)
		})},
	{op: "envelope_duplicate", name: "batch element", in: frames(`[` + req + `,1]`),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			n, _ := parseTree(out)
			if n == nil || n.Kind != jsontree.Array || !hasDuplicateKey(n.Elems[0]) {
				t.Fatalf("the batch element has no duplicate: %q", out)
			}
		})},

	{op: "id_edge", in: frames(req, notif),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			id := memberText(obj(t, out), "id")
			big := len(id) > 1024 && strings.Trim(id, `"i`) == ""
			if !inSet([]byte(id), idEdges) && !big {
				t.Fatalf("id %.40q is not an edge id", id)
			}
		})},

	{op: "method_dictionary", env: Env{Methods: []string{"echo", "add"}}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if m := memberText(obj(t, out), "method"); m != `"add"` {
				t.Fatalf("method %s", m)
			}
		})},
	{op: "method_dictionary", name: "no dictionary", in: frames(req), notApply: true},
	{op: "method_empty", in: frames(req, notif),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if m := memberText(obj(t, out), "method"); m != `""` {
				t.Fatalf("method %s", m)
			}
		})},
	{op: "method_empty", name: "empty already", in: frames(`{"jsonrpc":"2.0","id":1,"method":""}`), notApply: true},
	{op: "method_rpc_prefix", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			m := memberText(obj(t, out), "method")
			if !strings.HasPrefix(strings.ToLower(m), `"rpc`) {
				t.Fatalf("method %s", m)
			}
		})},
	{op: "method_long", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if m := memberText(obj(t, out), "method"); len(m) < 258 {
				t.Fatalf("method of %d bytes", len(m))
			}
		})},
	{op: "method_long", name: "no room", env: Env{MaxFrame: 200}, in: frames(req), notApply: true},
	{op: "method_near_miss", in: frames(req, named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			a := strings.Trim(memberText(obj(t, in), "method"), `"`)
			b := strings.Trim(memberText(obj(t, out), "method"), `"`)
			if a == b || (!strings.EqualFold(a, b) && !oneEdit(a, b)) {
				t.Fatalf("%q -> %q is not a near miss", a, b)
			}
		})},
	{op: "method_near_miss", name: "no method", in: frames(`{"jsonrpc":"2.0","id":1}`), notApply: true},
	{op: "method_near_miss", name: "method not a string", in: frames(`{"jsonrpc":"2.0","id":1,"method":5}`), notApply: true},

	{op: "params_absent", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if memberText(obj(t, out), "params") != "" {
				t.Fatalf("params still there: %q", out)
			}
		})},
	{op: "params_absent", name: "no params", in: frames(`{"jsonrpc":"2.0","id":1,"method":"x"}`), notApply: true},
	{op: "params_null", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if memberText(obj(t, out), "params") != "null" {
				t.Fatalf("params not null: %q", out)
			}
		})},
	{op: "params_null", name: "null already", in: frames(`{"id":1,"method":"x","params":null}`), notApply: true},
	{op: "params_scalar", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			p := obj(t, out).Get("params")
			if p == nil || (p.Kind != jsontree.Scalar && p.Kind != jsontree.String) || isNull(p) || p.Raw[0] == '[' || p.Raw[0] == '{' {
				t.Fatalf("params not a scalar: %q", out)
			}
		})},
	{op: "params_arity", in: frames(req, named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			a, b := obj(t, in).Get("params"), obj(t, out).Get("params")
			na, nb := len(a.Elems)+len(a.Members), len(b.Elems)+len(b.Members)
			if nb != na-1 && nb != na+1 {
				t.Fatalf("arity %d -> %d: %q", na, nb, out)
			}
		})},
	{op: "params_arity", name: "scalar params", in: frames(`{"id":1,"method":"x","params":1}`), notApply: true},
	{op: "params_arity", name: "no params", in: frames(`{"id":1,"method":"x"}`), notApply: true},
	{op: "params_duplicate_key", in: frames(named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !hasDuplicateKey(obj(t, out).Get("params")) {
				t.Fatalf("no duplicate key in params: %q", out)
			}
		})},
	{op: "params_duplicate_key", name: "no object in params", in: frames(req), notApply: true},
	{op: "params_schema_valid", env: Env{Params: map[string]json.RawMessage{"echo": arraySchema}}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !twoIntegers(memberText(obj(t, out), "params")) {
				t.Fatalf("params not two integers: %q", out)
			}
		})},
	{op: "params_schema_valid", name: "method without schema", env: Env{Params: map[string]json.RawMessage{"add": arraySchema}}, in: frames(req), notApply: true},
	{op: "params_schema_invalid", env: Env{Params: map[string]json.RawMessage{"echo": arraySchema}}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if twoIntegers(memberText(obj(t, out), "params")) {
				t.Fatalf("params valid: %q", out)
			}
		})},
	{op: "params_schema_invalid", name: "no schemas", in: frames(req), notApply: true},
	{op: "params_nesting", in: frames(req, named),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			d := depth(out) - 1 // the envelope
			ok := false
			for _, rung := range nestDepths {
				// A bottom of [] or {} and a place inside params add a level each.
				ok = ok || intIn(d, []int{rung, rung + 1, rung + 2, 2 * rung, 2*rung + 1, 2*rung + 2})
			}
			if !ok || d < 2 {
				t.Fatalf("params depth %d is no rung of the ladder", d)
			}
		})},
	{op: "params_nesting", name: "clamped to MaxFrame", env: Env{MaxFrame: 400}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if d := depth(out); d < 3 || d > 200 {
				t.Fatalf("depth %d under MaxFrame 400", d)
			}
		})},
	{op: "params_wide", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			p := obj(t, out).Get("params")
			clamped := len(out) > env.maxFrame()/2
			if p.Kind != jsontree.Array && p.Kind != jsontree.Object || !intIn(len(p.Elems)+len(p.Members), wideWidths) && !clamped {
				t.Fatalf("params width %d not on the ladder", len(p.Elems)+len(p.Members))
			}
		})},

	{op: "batch_empty", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if string(out) != "[]" {
				t.Fatalf("%q", out)
			}
		})},
	{op: "batch_empty", name: "empty already", in: frames(`[]`), notApply: true},
	{op: "batch_invalid", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !inSet(out, invalidBatches) {
				t.Fatalf("%q", out)
			}
		})},
	{op: "batch_wrap", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if out[0] != '[' || !bytes.Contains(out, in) || !isJSON(out) {
				t.Fatalf("%q", out)
			}
		})},
	{op: "batch_nested", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			n, ok := parseTree(out)
			nested := false
			for _, e := range n.Elems {
				nested = nested || e.Kind == jsontree.Array
			}
			if !ok || n.Kind != jsontree.Array || !nested {
				t.Fatalf("no batch in a batch: %q", out)
			}
		})},
	{op: "batch_notifications", in: frames(req, `[`+named+`]`),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			n, ok := parseTree(out)
			if !ok || n.Kind != jsontree.Array || len(n.Elems) == 0 {
				t.Fatalf("not a batch: %q", out)
			}
			for _, e := range n.Elems {
				if e.Kind != jsontree.Object || e.Find("id") >= 0 || e.Find("method") < 0 {
					t.Fatalf("not a notification: %q", jsontree.Append(nil, e))
				}
			}
		})},
	{op: "batch_notifications", name: "not a request", in: frames(`[1]`), notApply: true},
	{op: "batch_duplicate_ids", in: frames(req, notif),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			n, ok := parseTree(out)
			if !ok || n.Kind != jsontree.Array || len(n.Elems) < 2 {
				t.Fatalf("not a batch of 2+: %q", out)
			}
			for _, e := range n.Elems {
				if id := memberText(e, "id"); id != memberText(n.Elems[0], "id") || id == "" || id == "null" {
					t.Fatalf("ids differ or missing: %q", out)
				}
			}
		})},
	{op: "batch_size", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			n, ok := parseTree(out)
			if !ok || n.Kind != jsontree.Array {
				t.Fatalf("not a batch: %.100q", out)
			}
			full := len(out) > env.maxFrame()/2 // clamped to fit
			if !intIn(len(n.Elems), batchSizes) && !full {
				t.Fatalf("%d elements, not a size around a limit", len(n.Elems))
			}
			if e := n.Elems[0]; e.Kind == jsontree.Object && len(e.Members) > 0 {
				seen := map[string]bool{}
				for _, e := range n.Elems {
					seen[memberText(e, "id")] = true
				}
				if len(seen) != len(n.Elems) {
					t.Fatalf("ids not distinct")
				}
			}
		})},
	{op: "batch_size", name: "small MaxFrame", env: Env{MaxFrame: 300}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if n := elemCount(t, out); n < 2 || len(out) > 300 {
				t.Fatalf("%d elements in %d bytes", n, len(out))
			}
		})},

	{op: "seq_skip_handshake", env: Env{Profile: "lsp"}, in: frames(lspIni, lspNot, req), check: handshakeOutOfOrder(lspIni, lspNot)},
	{op: "seq_skip_handshake", name: "mcp", env: Env{Profile: "mcp"}, in: frames(mcpIni, mcpNot, req), check: handshakeOutOfOrder(mcpIni, mcpNot)},
	{op: "seq_skip_handshake", name: "initialize alone", env: Env{Profile: "mcp"}, in: frames(mcpIni, req, req), check: handshakeOutOfOrder(mcpIni)},
	{op: "seq_skip_handshake", name: "no handshake in profile", env: Env{Profile: "jsonrpc"}, in: frames(lspIni, lspNot, req), notApply: true},
	{op: "seq_skip_handshake", name: "no handshake frames", env: Env{Profile: "lsp"}, in: frames(req, req), notApply: true},
	{op: "seq_after_shutdown", env: Env{Profile: "lsp"}, in: frames(lspIni, lspNot, req),
		check: func(t *testing.T, in, out Case, env *Env) {
			n := len(out.Frames)
			if n != len(in.Frames)+2 || !bytes.Equal(out.Frames[n-2], shutdownFrame) {
				t.Fatalf("no shutdown: %q", out.Frames)
			}
			last := obj(t, out.Frames[n-1])
			if memberText(last, "method") != `"echo"` || memberText(last, "id") != string(afterID) {
				t.Fatalf("no request after shutdown: %q", out.Frames[n-1])
			}
		}},
	{op: "seq_after_shutdown", name: "mcp", env: Env{Profile: "mcp"}, in: frames(mcpIni, mcpNot, req), notApply: true},
	{op: "seq_cancel_unknown", env: Env{Profile: "lsp"}, in: frames(lspIni, lspNot, req),
		check: func(t *testing.T, in, out Case, env *Env) {
			checkCancel(t, in, out, `"$/cancelRequest"`, "id")
		}},
	{op: "seq_cancel_unknown", name: "mcp", env: Env{Profile: "mcp"}, in: frames(mcpIni, mcpNot, req),
		check: func(t *testing.T, in, out Case, env *Env) {
			checkCancel(t, in, out, `"notifications/cancelled"`, "requestId")
		}},
	{op: "seq_same_id_twice", in: frames(req, named),
		check: func(t *testing.T, in, out Case, env *Env) {
			if len(out.Frames) != len(in.Frames)+1 {
				t.Fatalf("%d frames", len(out.Frames))
			}
			ids := map[string]int{}
			for _, f := range out.Frames {
				ids[memberText(obj(t, f), "id")]++
			}
			if ids["1"] != 2 && ids[`"x"`] != 2 {
				t.Fatalf("no id twice: %v", ids)
			}
		}},
	{op: "seq_same_id_twice", name: "only notifications", in: frames(notif), notApply: true},
	{op: "seq_notification_flood", env: Env{Profile: "mcp"}, in: frames(mcpIni, mcpNot, req),
		check: func(t *testing.T, in, out Case, env *Env) {
			added := len(out.Frames) - len(in.Frames)
			if !intIn(added, floodCounts) || string(out.Frames[0]) != mcpIni || string(out.Frames[1]) != mcpNot {
				t.Fatalf("%d added, handshake first: %v", added, string(out.Frames[0]) == mcpIni)
			}
			notes := 0
			for _, f := range out.Frames {
				if string(f) == `{"jsonrpc":"2.0","method":"echo","params":[1,"a"]}` {
					notes++
				}
			}
			if notes != added {
				t.Fatalf("%d notifications for %d frames added", notes, added)
			}
		}},
	{op: "seq_notification_flood", name: "nothing to copy", in: frames(`[1]`), notApply: true},

	{op: "dict_insert", env: Env{Methods: []string{"tools/call"}}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			for _, tok := range append(dictionary, quoted("tools/call")) {
				for i := 0; i+len(tok) <= len(out); i++ {
					if bytes.Equal(out[i:i+len(tok)], tok) && bytes.Equal(append(clone(out[:i]), out[i+len(tok):]...), in) {
						return
					}
				}
			}
			t.Fatalf("no dictionary token inserted: %q", out)
		})},
	{op: "dict_replace", in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			p := 0
			for p < len(in) && p < len(out) && in[p] == out[p] {
				p++
			}
			s := 0
			for s < len(in)-p && s < len(out)-p && in[len(in)-1-s] == out[len(out)-1-s] {
				s++
			}
			for _, tok := range dictionary {
				for i := 0; i+len(tok) <= len(out); i++ {
					if bytes.Equal(out[i:i+len(tok)], tok) && i <= p && i+len(tok) >= len(out)-s {
						return
					}
				}
			}
			t.Fatalf("change %q is not a dictionary token: %q", out[p:len(out)-s], out)
		})},
	{op: "dict_replace", name: "no tokens to replace", in: frames(`[{},[]]`), notApply: true},
	{op: "splice_subtree", env: Env{Corpus: [][]byte{[]byte(`{"zz":["qq",true]}`)}}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !containsAny(out, lits(`{"zz":["qq",true]}`, `["qq",true]`, `"qq"`, "true")) {
				t.Fatalf("no donor subtree: %q", out)
			}
		})},
	{op: "splice_subtree", name: "no corpus", in: frames(req), notApply: true},
	{op: "splice_subtree", name: "broken frame", env: Env{Corpus: [][]byte{[]byte(`[1]`)}}, in: frames(`{"a":`), notApply: true},
	{op: "splice_bytes", env: Env{Corpus: [][]byte{[]byte("QWERTY")}}, in: frames(req),
		check: single(func(t *testing.T, in, out []byte, env *Env) {
			if !bytes.ContainsAny(out, "QWERTY") {
				t.Fatalf("no donor bytes: %q", out)
			}
		})},
	{op: "splice_bytes", name: "empty donor", env: Env{Corpus: [][]byte{{}}}, in: frames(req), notApply: true},
}

// twoIntegers is the arraySchema check.
func twoIntegers(text string) bool {
	var p []json.RawMessage
	if json.Unmarshal([]byte(text), &p) != nil || len(p) != 2 {
		return false
	}
	for _, v := range p {
		var n int64
		if json.Unmarshal(v, &n) != nil || string(v) == "null" {
			return false
		}
	}
	return true
}

func checkCancel(t *testing.T, in, out Case, method, idMember string) {
	t.Helper()
	if len(out.Frames) != len(in.Frames)+1 || string(out.Frames[0]) != string(in.Frames[0]) {
		t.Fatalf("frames %q", out.Frames)
	}
	used := map[string]bool{}
	for _, f := range in.Frames {
		used[memberText(obj(t, f), "id")] = true
	}
	for _, f := range out.Frames {
		o := obj(t, f)
		if memberText(o, "method") == method {
			p := o.Get("params")
			if id := memberText(p, idMember); id == "" || used[id] {
				t.Fatalf("cancel of a known id or none: %q", f)
			}
			return
		}
	}
	t.Fatalf("no %s: %q", method, out.Frames)
}

// seedsPerCase is how many choice streams each row is run with: enough to
// reach every variant of an op (they have at most a few dozen).
const seedsPerCase = 64

func TestOps(t *testing.T) {
	byName := map[string]Op{}
	for _, op := range Ops() {
		byName[op.Name] = op
	}
	for _, tc := range opCases {
		name := tc.op
		if tc.name != "" {
			name += "/" + tc.name
		}
		t.Run(name, func(t *testing.T) {
			op, ok := byName[tc.op]
			if !ok {
				t.Fatalf("no op %q", tc.op)
			}
			for seed := range uint64(seedsPerCase) {
				in := cloneCase(tc.in)
				out, ok := op.Apply(NewRand(seed), in, &tc.env)
				if !equalCase(in, tc.in) {
					t.Fatalf("seed %d: input modified", seed)
				}
				if tc.notApply {
					if ok {
						t.Fatalf("seed %d: applied, want not: %.200q", seed, out.Frames)
					}
					continue
				}
				if !ok {
					t.Fatalf("seed %d: did not apply", seed)
				}
				tc.check(t, in, out, &tc.env)
			}
		})
	}
}

// TestOpTable keeps the table, its tests and the documented list in step.
func TestOpTable(t *testing.T) {
	text, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(text)
	applies := map[string]bool{}
	for _, tc := range opCases {
		if !tc.notApply {
			applies[tc.op] = true
		}
	}
	seen := map[string]bool{}
	snake := regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)
	for _, op := range Ops() {
		if seen[op.Name] || !snake.MatchString(op.Name) {
			t.Errorf("op name %q duplicated or not snake_case", op.Name)
		}
		seen[op.Name] = true
		if !applies[op.Name] {
			t.Errorf("op %s has no table test where it applies", op.Name)
		}
		if !strings.Contains(doc, "//   - "+op.Name+": ") {
			t.Errorf("op %s is not listed in doc.go", op.Name)
		}
		if op.Class.String() == "unknown" {
			t.Errorf("op %s has no class name", op.Name)
		}
	}
	if n := strings.Count(doc, "//   - "); n != len(seen) {
		t.Errorf("doc.go lists %d ops, the table has %d", n, len(seen))
	}
}

// TestLadderTops: the biggest sizes are made rarely (see cheapBytes) but
// are made: each op reaches the top of its ladder within a bounded number
// of choice streams, at the default MaxFrame.
func TestLadderTops(t *testing.T) {
	const limit = DefaultMaxFrame
	tops := []struct {
		op  string
		in  Case
		top func(out Case) bool
	}{
		{"params_nesting", frames(req), func(out Case) bool { return depth(out.Frames[0]) > 100000 }},
		{"batch_size", frames(req), func(out Case) bool {
			if len(out.Frames[0]) < 200000 { // 100,000 elements take more
				return false
			}
			n, ok := parseShallow(out.Frames[0])
			return ok && len(n.Elems) == 100000
		}},
		{"params_wide", frames(req), func(out Case) bool {
			if len(out.Frames[0]) < 200000 { // 100,000 values take more
				return false
			}
			p := obj(t, out.Frames[0]).Get("params")
			return len(p.Elems)+len(p.Members) == 100000
		}},
		{"long_string", frames(req), func(out Case) bool { return len(out.Frames[0]) >= limit-8 }},
		{"long_line", frames(req), func(out Case) bool { return len(out.Frames[0]) == limit }},
		{"method_long", frames(req), func(out Case) bool { return len(out.Frames[0]) >= 1<<20-64 }},
		{"id_edge", frames(req), func(out Case) bool { return len(out.Frames[0]) > bigIDLength }},
		{"seq_notification_flood", frames(req), func(out Case) bool { return len(out.Frames) == 1001 }},
	}
	byName := map[string]Op{}
	for _, op := range Ops() {
		byName[op.Name] = op
	}
	for _, tc := range tops {
		t.Run(tc.op, func(t *testing.T) {
			for seed := range uint64(100000) {
				out, ok := byName[tc.op].Apply(NewRand(seed), tc.in, &Env{})
				if ok && tc.top(out) {
					return
				}
			}
			t.Fatalf("the top of the ladder was never made")
		})
	}
}

// handshakeOutOfOrder checks seq_skip_handshake's output: the handshake
// (messages hs, in their order) no longer comes first, whole and once, yet
// one of its messages is still there (the fuzzer sends such an input on a
// connection without its own handshake), and every other message is kept.
func handshakeOutOfOrder(hs ...string) func(t *testing.T, in, out Case, env *Env) {
	return func(t *testing.T, in, out Case, env *Env) {
		t.Helper()
		isHS := func(f []byte) bool { return slices.Contains(hs, string(f)) }
		if len(out.Frames) >= len(hs) && slices.Equal(frameStrings(out.Frames[:len(hs)]), hs) &&
			!slices.ContainsFunc(out.Frames[len(hs):], isHS) {
			t.Fatalf("handshake intact: %q", out.Frames)
		}
		if !slices.ContainsFunc(out.Frames, isHS) {
			t.Fatalf("no handshake message left: %q", out.Frames)
		}
		others := func(fs [][]byte) []string {
			var o []string
			for _, f := range fs {
				if !isHS(f) {
					o = append(o, string(f))
				}
			}
			slices.Sort(o)
			return o
		}
		if !slices.Equal(others(in.Frames), others(out.Frames)) {
			t.Fatalf("other messages changed: %q", out.Frames)
		}
	}
}

func frameStrings(fs [][]byte) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}
