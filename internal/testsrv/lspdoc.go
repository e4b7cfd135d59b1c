package testsrv

// The documents of an LSP connection and the language features computed
// from them. The "language" is minimal on purpose: a line that starts with
// "func " declares a function, which is enough for documentSymbol, hover
// and definition to return something a test can predict.

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// Bounds on what one connection may store, so a client cannot make the
// server hold unbounded memory; documents beyond them are not stored (and
// requests about them then get -32602 like any unknown document).
const (
	maxDocs     = 10_000
	maxDocBytes = 64 << 20
)

// docs maps document URIs to their text.
type docs struct {
	text  map[string]string
	bytes int
}

// set stores text for uri unless a bound would be exceeded.
func (d *docs) set(uri, text string) {
	if d.text == nil {
		d.text = map[string]string{}
	}
	old, had := d.text[uri]
	if (!had && len(d.text) >= maxDocs) || d.bytes-len(old)+len(text) > maxDocBytes {
		return
	}
	d.bytes += len(text) - len(old)
	d.text[uri] = text
}

// lspDoc is the part of a notification's params that names a document
// and its content.
type lspDoc struct {
	TextDocument struct {
		URI  *string `json:"uri"`
		Text *string `json:"text"`
	} `json:"textDocument"`
	ContentChanges []struct {
		Range json.RawMessage `json:"range"`
		Text  *string         `json:"text"`
	} `json:"contentChanges"`
}

// lspDocRequest is the part of a document request's params its answer
// reads: the document (TextDocumentIdentifier's uri), and for hover and
// definition the position. Only these members are decoded, so a member
// the request does not have is ignored whatever its value, as LSP's
// structural types are.
type lspDocRequest struct {
	TextDocument struct {
		URI *string `json:"uri"`
	} `json:"textDocument"`
}

// lspPositionRequest is TextDocumentPositionParams.
type lspPositionRequest struct {
	lspDocRequest
	Position *struct {
		Line      *int `json:"line"`
		Character *int `json:"character"`
	} `json:"position"`
}

// notify applies didOpen, didChange (full text: the server announced
// textDocumentSync 1, so a change with a range is ignored) and didClose.
// Other notifications and malformed params are ignored, as notifications
// cannot be answered.
func (d *docs) notify(method string, params []byte) {
	var p lspDoc
	if json.Unmarshal(params, &p) != nil || p.TextDocument.URI == nil {
		return
	}
	uri := *p.TextDocument.URI
	switch method {
	case "textDocument/didOpen":
		if p.TextDocument.Text != nil {
			d.set(uri, *p.TextDocument.Text)
		}
	case "textDocument/didChange":
		if _, open := d.text[uri]; !open {
			return
		}
		for _, ch := range p.ContentChanges {
			if ch.Range == nil && ch.Text != nil {
				d.set(uri, *ch.Text)
			}
		}
	case "textDocument/didClose":
		d.bytes -= len(d.text[uri])
		delete(d.text, uri)
	}
}

// request answers the document requests; anything else is -32601. A URI the
// client never opened is -32602: the client forgot didOpen, and an empty
// answer would hide that.
func (d *docs) request(method string, params []byte) ([]byte, *rpcError) {
	switch method {
	case "textDocument/documentSymbol", "textDocument/hover", "textDocument/definition":
	default:
		return nil, &rpcError{code: wire.CodeMethodNotFound, msg: msgMethodNotFound, data: wire.AppendString(nil, method)}
	}
	var p lspPositionRequest
	var target any = &p
	if method == "textDocument/documentSymbol" {
		target = &p.lspDocRequest // (no position: whatever one holds is not read)
	}
	if json.Unmarshal(params, target) != nil || p.TextDocument.URI == nil {
		return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "%s needs textDocument.uri, a string", method)
	}
	uri := *p.TextDocument.URI
	text, ok := d.text[uri]
	if !ok {
		return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "unknown document %q: open it with textDocument/didOpen first", uri)
	}
	lines := strings.Split(text, "\n")
	if method == "textDocument/documentSymbol" {
		return documentSymbols(lines), nil
	}
	// Position's line and character are both required, LSP uintegers.
	if pos := p.Position; pos == nil || !uinteger(pos.Line) || !uinteger(pos.Character) {
		return nil, errf(wire.CodeInvalidParams, msgInvalidParams, "%s needs position {line, character}, uintegers (0 to 2^31-1)", method)
	}
	word := wordAt(lines, *p.Position.Line, *p.Position.Character)
	if method == "textDocument/hover" {
		if word == "" {
			return []byte("null"), nil
		}
		b, _ := json.Marshal(map[string]string{"contents": fmt.Sprintf("%s (line %d of %s)", word, *p.Position.Line, uri)})
		return b, nil
	}
	for i, line := range lines {
		if name, start, ok := funcName(line); ok && name == word {
			b, _ := json.Marshal(map[string]any{"uri": uri, "range": lspRange(i, start, start+utf16Len(name))})
			return b, nil
		}
	}
	return []byte("null"), nil
}

// uinteger reports whether n is present and an LSP uinteger.
func uinteger(n *int) bool { return n != nil && *n >= 0 && *n <= 1<<31-1 }

// documentSymbols returns one DocumentSymbol (kind 12, Function) per line
// that declares a function.
func documentSymbols(lines []string) []byte {
	type symbol struct {
		Name           string `json:"name"`
		Kind           int    `json:"kind"`
		Range          any    `json:"range"`
		SelectionRange any    `json:"selectionRange"`
	}
	out := []symbol{}
	for i, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if name, start, ok := funcName(line); ok {
			out = append(out, symbol{name, 12, lspRange(i, 0, utf16Len(line)), lspRange(i, start, start+utf16Len(name))})
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// funcName returns the name a line starting with "func " declares and
// where it starts (in UTF-16 units): the next word, after a receiver in
// parentheses if there is one. ok is false when no name follows.
func funcName(line string) (name string, start int, ok bool) {
	rest, found := strings.CutPrefix(line, "func ")
	if !found {
		return "", 0, false
	}
	off := len("func ")
	trimmed := strings.TrimLeft(rest, " \t")
	off += len(rest) - len(trimmed)
	if strings.HasPrefix(trimmed, "(") {
		end := strings.IndexByte(trimmed, ')')
		if end < 0 {
			return "", 0, false
		}
		after := strings.TrimLeft(trimmed[end+1:], " \t")
		off += len(trimmed) - len(after)
		trimmed = after
	}
	n := 0
	for n < len(trimmed) && isWordByte(trimmed[n]) {
		n++
	}
	if n == 0 {
		return "", 0, false
	}
	return trimmed[:n], utf16Len(line[:off]), true
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= utf8.RuneSelf
}

// wordAt returns the word around a position (character in UTF-16 units,
// LSP's default position encoding), or "".
func wordAt(lines []string, line, char int) string {
	if line >= len(lines) {
		return ""
	}
	text := strings.TrimSuffix(lines[line], "\r")
	i := byteOffset(text, char)
	lo, hi := i, i
	for lo > 0 && isWordByte(text[lo-1]) {
		lo--
	}
	for hi < len(text) && isWordByte(text[hi]) {
		hi++
	}
	return text[lo:hi]
}

// byteOffset converts a UTF-16 offset into a byte offset of s, clamped to
// len(s).
func byteOffset(s string, units int) int {
	n := 0
	for i, r := range s {
		if n >= units {
			return i
		}
		n += utf16.RuneLen(r)
		if utf16.RuneLen(r) < 0 {
			n++ // invalid UTF-8 counts as one unit
		}
	}
	return len(s)
}

// utf16Len is the length of s in UTF-16 units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += l
		} else {
			n++
		}
	}
	return n
}

// lspRange is a Range on one line.
func lspRange(line, from, to int) map[string]any {
	return map[string]any{
		"start": map[string]int{"line": line, "character": from},
		"end":   map[string]int{"line": line, "character": to},
	}
}
