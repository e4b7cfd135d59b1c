package apispec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// LSPFile is a document the client opened (textDocument/didOpen): its URI
// as the client sent it, and its text.
type LSPFile struct {
	URI  string
	Text []byte
}

// maxUInteger is LSP's uinteger's largest value (2^31 - 1): positions and
// sizes are uintegers.
const maxUInteger = 1<<31 - 1

// lspParams says which shape of params a request takes, so that its schema
// and its examples are made alike.
type lspParams uint8

const (
	paramsDocument        lspParams = iota // {textDocument}
	paramsPosition                         // {textDocument, position} (TextDocumentPositionParams)
	paramsReferences                       // + context {includeDeclaration}
	paramsCompletion                       // + context? {triggerKind, triggerCharacter?}
	paramsSignatureHelp                    // + context? {triggerKind, triggerCharacter?, isRetrigger}
	paramsRename                           // + newName
	paramsOnType                           // + ch, options
	paramsRange                            // {textDocument, range}
	paramsCodeAction                       // + context {diagnostics, only?, triggerKind?}
	paramsRangeFormat                      // + options
	paramsInlineValue                      // + context {frameId, stoppedLocation}
	paramsFormatting                       // {textDocument, options}
	paramsSelection                        // {textDocument, positions}
	paramsDiagnostic                       // {textDocument, identifier?, previousResultId?}
	paramsWorkspaceSymbol                  // {query}
)

// lspRequest is one request a server's capabilities can announce.
type lspRequest struct {
	capability string // the member of ServerCapabilities
	// sub, when set, is the member of the capability's options object
	// that must be true or an object too (semanticTokensProvider.full,
	// renameProvider.prepareProvider).
	sub    string
	method string
	params lspParams
	// result is the JSON Schema of the result, only where LSP 3.17 fixes
	// a plain shape (a result_schema_mismatch is a failure: a schema that
	// is wrong would be the fuzzer's false positive); "" for none.
	result string
}

// The results' schemas: the members LSP 3.17 requires and their types,
// nothing more (no closed objects, no enum a later version may widen), and
// null wherever the specification allows it. They refer to the $defs of
// lspResultDefs.
const (
	resLocations    = `{"anyOf":[{"type":"null"},{"$ref":"#/$defs/Location"},{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/Location"},{"$ref":"#/$defs/LocationLink"}]}}]}`
	resHover        = `{"anyOf":[{"type":"null"},{"type":"object","required":["contents"],"properties":{"contents":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/Valued"},{"type":"array","items":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/Valued"}]}}]},"range":{"$ref":"#/$defs/Range"}}}]}`
	resReferences   = `{"anyOf":[{"type":"null"},{"type":"array","items":{"$ref":"#/$defs/Location"}}]}`
	resRanged       = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["range"],"properties":{"range":{"$ref":"#/$defs/Range"}}}}]}`
	resTextEdits    = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["range","newText"],"properties":{"range":{"$ref":"#/$defs/Range"},"newText":{"type":"string"}}}}]}`
	resSymbols      = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["name","kind"],"properties":{"name":{"type":"string"},"kind":{"type":"integer"}}}}]}`
	resWorkspaceSym = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["name","kind","location"],"properties":{"name":{"type":"string"},"kind":{"type":"integer"},"location":{"type":"object"}}}}]}`
	resCompletion   = `{"anyOf":[{"type":"null"},{"type":"array","items":{"$ref":"#/$defs/CompletionItem"}},{"type":"object","required":["isIncomplete","items"],"properties":{"isIncomplete":{"type":"boolean"},"items":{"type":"array","items":{"$ref":"#/$defs/CompletionItem"}}}}]}`
	resSignature    = `{"anyOf":[{"type":"null"},{"type":"object","required":["signatures"],"properties":{"signatures":{"type":"array","items":{"type":"object","required":["label"],"properties":{"label":{"type":"string"}}}}}}]}`
	resCodeActions  = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["title"],"properties":{"title":{"type":"string"}}}}]}`
	resWorkspaceEd  = `{"type":["null","object"]}`
	resPrepare      = `{"anyOf":[{"type":"null"},{"$ref":"#/$defs/Range"},{"type":"object","required":["range","placeholder"],"properties":{"range":{"$ref":"#/$defs/Range"},"placeholder":{"type":"string"}}},{"type":"object","required":["defaultBehavior"],"properties":{"defaultBehavior":{"type":"boolean"}}}]}`
	resFolding      = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["startLine","endLine"],"properties":{"startLine":{"$ref":"#/$defs/uinteger"},"endLine":{"$ref":"#/$defs/uinteger"}}}}]}`
	resSelection    = `{"anyOf":[{"type":"null"},{"type":"array","items":{"$ref":"#/$defs/SelectionRange"}}]}`
	resTokens       = `{"anyOf":[{"type":"null"},{"type":"object","required":["data"],"properties":{"data":{"type":"array","items":{"$ref":"#/$defs/uinteger"}}}}]}`
	resInlayHints   = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["position","label"],"properties":{"position":{"$ref":"#/$defs/Position"},"label":{"type":["string","array"]}}}}]}`
	resHierarchy    = `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","required":["name","kind","uri","range","selectionRange"],"properties":{"name":{"type":"string"},"kind":{"type":"integer"},"uri":{"type":"string"},"range":{"$ref":"#/$defs/Range"},"selectionRange":{"$ref":"#/$defs/Range"}}}}]}`
	resLinkedRanges = `{"anyOf":[{"type":"null"},{"type":"object","required":["ranges"],"properties":{"ranges":{"type":"array","items":{"$ref":"#/$defs/Range"}}}}]}`
)

// lspResultDefs are the definitions the results' schemas refer to. A
// position in a result is any uinteger a server computed (no upper bound
// is checked there: a result is judged only on its shape).
const lspResultDefs = `{
 "uinteger": {"type":"integer","minimum":0},
 "Position": {"type":"object","required":["line","character"],"properties":{"line":{"$ref":"#/$defs/uinteger"},"character":{"$ref":"#/$defs/uinteger"}}},
 "Range": {"type":"object","required":["start","end"],"properties":{"start":{"$ref":"#/$defs/Position"},"end":{"$ref":"#/$defs/Position"}}},
 "Location": {"type":"object","required":["uri","range"],"properties":{"uri":{"type":"string"},"range":{"$ref":"#/$defs/Range"}}},
 "LocationLink": {"type":"object","required":["targetUri","targetRange","targetSelectionRange"],"properties":{"originSelectionRange":{"$ref":"#/$defs/Range"},"targetUri":{"type":"string"},"targetRange":{"$ref":"#/$defs/Range"},"targetSelectionRange":{"$ref":"#/$defs/Range"}}},
 "Valued": {"type":"object","required":["value"],"properties":{"value":{"type":"string"}}},
 "CompletionItem": {"type":"object","required":["label"],"properties":{"label":{"type":"string"}}},
 "SelectionRange": {"type":"object","required":["range"],"properties":{"range":{"$ref":"#/$defs/Range"},"parent":{"$ref":"#/$defs/SelectionRange"}}}
}`

// lspRequests are the requests FromLSP knows, in the order of LSP 3.17's
// "Language Features" (workspace/symbol last). workspace/executeCommand
// is left out on purpose: a server's commands act outside the protocol
// (gopls's rewrite go.mod), and a fuzzer must not change the workspace.
var lspRequests = []lspRequest{
	{capability: "declarationProvider", method: "textDocument/declaration", params: paramsPosition, result: resLocations},
	{capability: "definitionProvider", method: "textDocument/definition", params: paramsPosition, result: resLocations},
	{capability: "typeDefinitionProvider", method: "textDocument/typeDefinition", params: paramsPosition, result: resLocations},
	{capability: "implementationProvider", method: "textDocument/implementation", params: paramsPosition, result: resLocations},
	{capability: "referencesProvider", method: "textDocument/references", params: paramsReferences, result: resReferences},
	{capability: "callHierarchyProvider", method: "textDocument/prepareCallHierarchy", params: paramsPosition, result: resHierarchy},
	{capability: "typeHierarchyProvider", method: "textDocument/prepareTypeHierarchy", params: paramsPosition, result: resHierarchy},
	{capability: "documentHighlightProvider", method: "textDocument/documentHighlight", params: paramsPosition, result: resRanged},
	{capability: "documentLinkProvider", method: "textDocument/documentLink", params: paramsDocument, result: resRanged},
	{capability: "hoverProvider", method: "textDocument/hover", params: paramsPosition, result: resHover},
	{capability: "codeLensProvider", method: "textDocument/codeLens", params: paramsDocument, result: resRanged},
	{capability: "foldingRangeProvider", method: "textDocument/foldingRange", params: paramsDocument, result: resFolding},
	{capability: "selectionRangeProvider", method: "textDocument/selectionRange", params: paramsSelection, result: resSelection},
	{capability: "documentSymbolProvider", method: "textDocument/documentSymbol", params: paramsDocument, result: resSymbols},
	{capability: "semanticTokensProvider", sub: "full", method: "textDocument/semanticTokens/full", params: paramsDocument, result: resTokens},
	{capability: "semanticTokensProvider", sub: "range", method: "textDocument/semanticTokens/range", params: paramsRange, result: resTokens},
	{capability: "inlineValueProvider", method: "textDocument/inlineValue", params: paramsInlineValue},
	{capability: "inlayHintProvider", method: "textDocument/inlayHint", params: paramsRange, result: resInlayHints},
	{capability: "monikerProvider", method: "textDocument/moniker", params: paramsPosition},
	{capability: "completionProvider", method: "textDocument/completion", params: paramsCompletion, result: resCompletion},
	{capability: "diagnosticProvider", method: "textDocument/diagnostic", params: paramsDiagnostic},
	{capability: "signatureHelpProvider", method: "textDocument/signatureHelp", params: paramsSignatureHelp, result: resSignature},
	{capability: "codeActionProvider", method: "textDocument/codeAction", params: paramsCodeAction, result: resCodeActions},
	{capability: "colorProvider", method: "textDocument/documentColor", params: paramsDocument},
	{capability: "documentFormattingProvider", method: "textDocument/formatting", params: paramsFormatting, result: resTextEdits},
	{capability: "documentRangeFormattingProvider", method: "textDocument/rangeFormatting", params: paramsRangeFormat, result: resTextEdits},
	{capability: "documentOnTypeFormattingProvider", method: "textDocument/onTypeFormatting", params: paramsOnType, result: resTextEdits},
	{capability: "renameProvider", method: "textDocument/rename", params: paramsRename, result: resWorkspaceEd},
	{capability: "renameProvider", sub: "prepareProvider", method: "textDocument/prepareRename", params: paramsPosition, result: resPrepare},
	{capability: "linkedEditingRangeProvider", method: "textDocument/linkedEditingRange", params: paramsPosition, result: resLinkedRanges},
	{capability: "workspaceSymbolProvider", method: "workspace/symbol", params: paramsWorkspaceSymbol, result: resWorkspaceSym},
}

// FromLSP reads the requests a language server announces in its
// InitializeResult's capabilities (capabilities is that object) into
// methods whose params schemas are LSP 3.17's, about the documents the
// client opened (files): textDocument.uri is one of their URIs (an enum),
// positions are {line, character} uintegers (0 to 2^31-1), and the members
// a request requires are required (references' context.includeDeclaration,
// codeAction's context.diagnostics, formatting's options.tabSize and
// insertSpaces, rename's newName, ...). A provider counts when it is true
// or an object (semanticTokensProvider's full and range, and
// renameProvider's prepareProvider, by their own member). A position
// outside a file is valid params: the server must answer it, with an
// error or an empty result. Examples hold, for each file, positions inside
// it (0:0, the middle, the start of its last word, the last character of
// the last line) and just outside it (the line after the last, one
// character past a line's end).
// The result schema is set only where LSP fixes a plain shape; without a
// file, only workspace/symbol can be called (the others are left out with
// a note).
func FromLSP(capabilities []byte, files []LSPFile) (*API, error) {
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(capabilities, &caps); err != nil || caps == nil {
		return nil, fmt.Errorf("the initialize result's capabilities are not a JSON object: %.80q", capabilities)
	}
	files = uniqueFiles(files)
	uris := make([]string, len(files))
	for i, f := range files {
		uris[i] = f.URI
	}
	api := &API{}
	for _, rq := range lspRequests {
		opts, ok := caps[rq.capability]
		if !ok || !announced(opts) {
			continue
		}
		if rq.sub != "" {
			sub, ok := wire.Member(wire.TrimSpace(opts), `"`+rq.sub+`"`)
			if !ok || !announced(sub) {
				continue
			}
		}
		if rq.params != paramsWorkspaceSymbol && len(files) == 0 {
			api.Notes = append(api.Notes, fmt.Sprintf("left out: %s (no document is open to ask about)", rq.method))
			continue
		}
		m, err := rq.build(uris, files, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rq.method, err)
		}
		if err := api.Add(m); err != nil {
			return nil, err
		}
	}
	return api, nil
}

// announced reports whether a capability's value announces the feature:
// true, or an options object.
func announced(v []byte) bool {
	v = wire.TrimSpace(v)
	return bytes.Equal(v, []byte("true")) || len(v) > 0 && v[0] == '{'
}

// uniqueFiles drops files with an empty URI and the later files of a URI
// seen before.
func uniqueFiles(files []LSPFile) []LSPFile {
	out := make([]LSPFile, 0, len(files))
	for _, f := range files {
		if f.URI != "" && !slices.ContainsFunc(out, func(g LSPFile) bool { return g.URI == f.URI }) {
			out = append(out, f)
		}
	}
	return out
}

// build makes the method: its params schema, examples and result schema.
func (rq lspRequest) build(uris []string, files []LSPFile, opts []byte) (Method, error) {
	m := Method{Name: rq.method, Call: rq.method, Source: "lsp"}
	schema := map[string]any{"type": "object", "properties": rq.properties(), "required": rq.required(), "$defs": lspParamDefs(uris)}
	var err error
	if m.Params, err = json.Marshal(schema); err != nil {
		return m, err
	}
	if rq.result != "" {
		m.Result = []byte(`{"$defs":` + lspResultDefs + `,"allOf":[` + rq.result + `]}`)
	}
	trigger := "\n"
	if t, ok := wire.Member(wire.TrimSpace(opts), `"firstTriggerCharacter"`); ok {
		if s, ok := wire.Unquote(nil, t); ok && len(s) > 0 {
			trigger = string(s)
		}
	}
	for _, f := range files {
		for _, ex := range rq.examples(f, trigger) {
			b, err := json.Marshal(ex)
			if err != nil {
				return m, err
			}
			m.Examples = append(m.Examples, b)
		}
	}
	if rq.params == paramsWorkspaceSymbol {
		for _, q := range workspaceQueries(files) {
			b, _ := json.Marshal(map[string]any{"query": q})
			m.Examples = append(m.Examples, b)
		}
	}
	return m, nil
}

// lspParamDefs are the definitions the params' schemas refer to: LSP's
// uinteger and integer, Position, Range, a TextDocumentIdentifier of one
// of uris, FormattingOptions and Diagnostic (with its required members).
func lspParamDefs(uris []string) map[string]any {
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }
	obj := func(required []string, props map[string]any) map[string]any {
		return map[string]any{"type": "object", "required": required, "properties": props}
	}
	return map[string]any{
		"uinteger": map[string]any{"type": "integer", "minimum": 0, "maximum": maxUInteger},
		"integer":  map[string]any{"type": "integer", "minimum": -maxUInteger - 1, "maximum": maxUInteger},
		"Position": obj([]string{"line", "character"}, map[string]any{"line": ref("uinteger"), "character": ref("uinteger")}),
		"Range":    obj([]string{"start", "end"}, map[string]any{"start": ref("Position"), "end": ref("Position")}),
		"TextDocumentIdentifier": obj([]string{"uri"}, map[string]any{
			"uri": map[string]any{"type": "string", "enum": uris},
		}),
		// FormattingOptions: "[key: string]: boolean | integer | string"
		// besides the members it names.
		"FormattingOptions": map[string]any{"type": "object", "required": []string{"tabSize", "insertSpaces"},
			"properties": map[string]any{"tabSize": ref("uinteger"), "insertSpaces": boolean(),
				"trimTrailingWhitespace": boolean(), "insertFinalNewline": boolean(), "trimFinalNewlines": boolean()},
			"additionalProperties": map[string]any{"anyOf": []any{boolean(), ref("integer"), str()}}},
		"Diagnostic": obj([]string{"range", "message"}, map[string]any{"range": ref("Range"),
			"severity": map[string]any{"enum": []int{1, 2, 3, 4}}, "code": map[string]any{"anyOf": []any{ref("integer"), str()}},
			"source": str(), "message": str()}),
	}
}

func boolean() map[string]any { return map[string]any{"type": "boolean"} }
func str() map[string]any     { return map[string]any{"type": "string"} }

// properties are the members of the request's params LSP 3.17 names (the
// optional workDoneToken and partialResultToken left out: a server may
// ignore them).
func (rq lspRequest) properties() map[string]any {
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }
	p := map[string]any{"textDocument": ref("TextDocumentIdentifier")}
	switch rq.params {
	case paramsPosition, paramsReferences, paramsCompletion, paramsSignatureHelp, paramsRename, paramsOnType:
		p["position"] = ref("Position")
	case paramsRange, paramsCodeAction, paramsRangeFormat, paramsInlineValue:
		p["range"] = ref("Range")
	}
	switch rq.params {
	case paramsReferences:
		p["context"] = map[string]any{"type": "object", "required": []string{"includeDeclaration"},
			"properties": map[string]any{"includeDeclaration": boolean()}}
	case paramsCompletion:
		p["context"] = map[string]any{"type": "object", "required": []string{"triggerKind"},
			"properties": map[string]any{"triggerKind": map[string]any{"enum": []int{1, 2, 3}}, "triggerCharacter": str()}}
	case paramsSignatureHelp:
		p["context"] = map[string]any{"type": "object", "required": []string{"triggerKind", "isRetrigger"},
			"properties": map[string]any{"triggerKind": map[string]any{"enum": []int{1, 2, 3}}, "triggerCharacter": str(), "isRetrigger": boolean()}}
	case paramsRename:
		p["newName"] = str()
	case paramsOnType:
		p["ch"], p["options"] = str(), ref("FormattingOptions")
	case paramsCodeAction:
		p["context"] = map[string]any{"type": "object", "required": []string{"diagnostics"},
			"properties": map[string]any{"diagnostics": map[string]any{"type": "array", "items": ref("Diagnostic")},
				"only": map[string]any{"type": "array", "items": str()}, "triggerKind": map[string]any{"enum": []int{1, 2}}}}
	case paramsRangeFormat, paramsFormatting:
		p["options"] = ref("FormattingOptions")
	case paramsInlineValue:
		p["context"] = map[string]any{"type": "object", "required": []string{"frameId", "stoppedLocation"},
			"properties": map[string]any{"frameId": ref("integer"), "stoppedLocation": ref("Range")}}
	case paramsSelection:
		p["positions"] = map[string]any{"type": "array", "items": ref("Position")}
	case paramsDiagnostic:
		p["identifier"], p["previousResultId"] = str(), str()
	case paramsWorkspaceSymbol:
		return map[string]any{"query": str()}
	}
	return p
}

// required are the members of properties LSP 3.17 requires.
func (rq lspRequest) required() []string {
	switch rq.params {
	case paramsDocument, paramsDiagnostic:
		return []string{"textDocument"}
	case paramsPosition, paramsCompletion, paramsSignatureHelp:
		return []string{"textDocument", "position"}
	case paramsReferences:
		return []string{"textDocument", "position", "context"}
	case paramsRename:
		return []string{"textDocument", "position", "newName"}
	case paramsOnType:
		return []string{"textDocument", "position", "ch", "options"}
	case paramsRange:
		return []string{"textDocument", "range"}
	case paramsCodeAction, paramsInlineValue:
		return []string{"textDocument", "range", "context"}
	case paramsRangeFormat:
		return []string{"textDocument", "range", "options"}
	case paramsFormatting:
		return []string{"textDocument", "options"}
	case paramsSelection:
		return []string{"textDocument", "positions"}
	}
	return []string{"query"} // paramsWorkspaceSymbol
}

// lspPos is an LSP Position.
type lspPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// lspRange is an LSP Range.
type lspRange struct {
	Start lspPos `json:"start"`
	End   lspPos `json:"end"`
}

// filePlaces are the positions and ranges of a file the examples ask
// about: inside it (0:0, the middle, the start of its last word, the last
// character of the last line with text) and just outside it (the line
// after the last, one character past the middle line's end), in UTF-16
// code units as LSP counts by default. The word is there so that some
// calls ask about an identifier (definition, references, rename answer
// little else); a file without one has no such position.
func filePlaces(text []byte) (positions []lspPos, ranges []lspRange) {
	lines := strings.Split(string(text), "\n")
	width := func(i int) int { return utf16Len(strings.TrimSuffix(lines[i], "\r")) }
	mid := len(lines) / 2
	last := len(lines) - 1
	for last > 0 && width(last) == 0 {
		last--
	}
	lastText := strings.TrimSuffix(lines[last], "\r")
	lastChar := lspPos{last, width(last)}
	if r, _ := utf8.DecodeLastRuneInString(lastText); lastText != "" {
		lastChar.Character -= max(1, utf16.RuneLen(r)) // the start of its last character, not inside a surrogate pair
	}
	after := lspPos{len(lines), 0}
	positions = []lspPos{{0, 0}, {mid, width(mid) / 2}}
	if word, ok := lastWord(lines); ok {
		positions = append(positions, word)
	}
	positions = append(positions, lastChar, after, lspPos{mid, width(mid) + 1})
	ranges = []lspRange{
		{lspPos{0, 0}, lspPos{last, width(last)}}, // the whole text
		{positions[1], positions[1]},              // empty, in the middle
		{lspPos{mid, 0}, after},                   // ending just outside
	}
	return positions, ranges
}

// lastWord returns where the last word of lines starts: the last run of
// at least three letters, digits and underscores that starts with a letter
// or an underscore (an identifier in most languages).
func lastWord(lines []string) (lspPos, bool) {
	isWord := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		for end := len(line); end > 0; {
			if !isWord(line[end-1]) {
				end--
				continue
			}
			start := end
			for start > 0 && isWord(line[start-1]) {
				start--
			}
			if c := line[start]; end-start >= 3 && (c < '0' || c > '9') {
				return lspPos{i, utf16Len(line[:start])}, true
			}
			end = start
		}
	}
	return lspPos{}, false
}

// utf16Len is the length of s in UTF-16 code units (a byte of invalid
// UTF-8 counts as one).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(1, utf16.RuneLen(r))
	}
	return n
}

// examples are the request's params about file f (trigger: the
// onTypeFormatting character).
func (rq lspRequest) examples(f LSPFile, trigger string) []map[string]any {
	if rq.params == paramsWorkspaceSymbol {
		return nil
	}
	doc := map[string]any{"uri": f.URI}
	positions, ranges := filePlaces(f.Text)
	options := map[string]any{"tabSize": 4, "insertSpaces": false}
	var out []map[string]any
	switch rq.params {
	case paramsDocument, paramsFormatting, paramsDiagnostic:
		p := map[string]any{"textDocument": doc}
		if rq.params == paramsFormatting {
			p["options"] = options
		}
		return append(out, p)
	case paramsSelection:
		return append(out, map[string]any{"textDocument": doc, "positions": positions})
	case paramsRange, paramsCodeAction, paramsRangeFormat, paramsInlineValue:
		for _, r := range ranges {
			p := map[string]any{"textDocument": doc, "range": r}
			switch rq.params {
			case paramsCodeAction:
				p["context"] = map[string]any{"diagnostics": []any{}}
			case paramsRangeFormat:
				p["options"] = options
			case paramsInlineValue:
				p["context"] = map[string]any{"frameId": 0, "stoppedLocation": r}
			}
			out = append(out, p)
		}
		return out
	}
	for i, pos := range positions {
		p := map[string]any{"textDocument": doc, "position": pos}
		switch rq.params {
		case paramsReferences:
			p["context"] = map[string]any{"includeDeclaration": i%2 == 0}
		case paramsCompletion:
			if i%2 == 1 {
				p["context"] = map[string]any{"triggerKind": 1}
			}
		case paramsSignatureHelp:
			if i%2 == 1 {
				p["context"] = map[string]any{"triggerKind": 1, "isRetrigger": false}
			}
		case paramsRename:
			p["newName"] = "renamed"
		case paramsOnType:
			p["ch"], p["options"] = trigger, options
		}
		out = append(out, p)
	}
	return out
}

// workspaceQueries are workspace/symbol's example queries: every symbol
// (""), and the first word of three letters or more in the files.
func workspaceQueries(files []LSPFile) []string {
	out := []string{""}
	for _, f := range files {
		if w := firstWord(f.Text); w != "" {
			return append(out, w)
		}
	}
	return out
}

// firstWord returns the first run of three or more ASCII letters in text
// that is valid UTF-8, or "".
func firstWord(text []byte) string {
	if !utf8.Valid(text) {
		return ""
	}
	start := -1
	for i := 0; i <= len(text); i++ {
		letter := i < len(text) && (text[i] >= 'a' && text[i] <= 'z' || text[i] >= 'A' && text[i] <= 'Z')
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			if i-start >= 3 {
				return string(text[start:i])
			}
			start = -1
		}
	}
	return ""
}
