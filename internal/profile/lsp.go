package profile

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/wire"
)

type lsp struct {
	plain
	initParams []byte // InitializeParams
	folders    []byte // [{"uri":...,"name":...}] or null
}

// lspCapabilities are the client capabilities rpcload declares: the ones
// whose server requests AnswerServerRequest answers meaningfully
// (workspace/configuration, workspace/workspaceFolders,
// window/workDoneProgress/create), as an editor would declare them.
const lspCapabilities = `{"workspace":{"configuration":true,"workspaceFolders":true},"window":{"workDoneProgress":true}}`

func newLSP(o Options) (*lsp, error) {
	p := &lsp{plain: plain{name: LSP}, folders: []byte("null")}
	root := []byte("null")
	if o.Workspace != "" {
		if !filepath.IsAbs(o.Workspace) {
			return nil, fmt.Errorf("profile: the LSP workspace %q is not an absolute path", o.Workspace)
		}
		uri := wire.AppendString(nil, FileURI(o.Workspace))
		root = uri
		f := append([]byte(`[{"uri":`), uri...)
		f = append(f, `,"name":`...)
		f = wire.AppendString(f, filepath.Base(filepath.Clean(o.Workspace)))
		p.folders = append(f, '}', ']')
	}
	// InitializeParams (LSP 3.17): processId, rootUri and capabilities are
	// required; clientInfo and workspaceFolders optional.
	b := []byte(`{"processId":`)
	if o.ProcessID > 0 {
		b = strconv.AppendInt(b, int64(o.ProcessID), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"clientInfo":`...)
	b = appendImplementation(b, o.ClientName, o.ClientVersion)
	b = append(b, `,"rootUri":`...)
	b = append(b, root...)
	b = append(b, `,"capabilities":`...)
	b = append(b, lspCapabilities...)
	b = append(b, `,"workspaceFolders":`...)
	b = append(b, p.folders...)
	p.initParams = append(b, '}')
	return p, nil
}

// FileURI returns the file:// URI of an absolute path, percent-encoded as
// net/url encodes a path (file:///home/a%20b).
func FileURI(path string) string {
	p := filepath.ToSlash(filepath.Clean(path))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path: file:///C:/x
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// Handshake: initialize, then initialized with empty params
// (InitializedParams is an empty object).
func (p *lsp) Handshake(Era) []Step {
	return []Step{
		{Method: "initialize", Params: p.initParams, Accept: acceptLSPInitialize},
		{Method: "initialized", Params: []byte("{}"), Notification: true},
	}
}

func acceptLSPInitialize(m *wire.Message, era Era) (Era, error) {
	if err := replyError("initialize", m); err != nil {
		return era, err
	}
	caps, ok := member(wire.TrimSpace(m.Result), "capabilities")
	if !ok || caps[0] != '{' {
		return era, errors.New("profile: the initialize result has no capabilities object")
	}
	return era, nil
}

// Shutdown: the shutdown request (no params; its result is null), then the
// exit notification.
func (p *lsp) Shutdown() []Step {
	return []Step{
		{Method: "shutdown", Accept: acceptShutdown},
		{Method: "exit", Notification: true},
	}
}

func acceptShutdown(m *wire.Message, era Era) (Era, error) {
	return era, replyError("shutdown", m)
}

var lspCancelHead = []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":`)

// Cancel appends $/cancelRequest {id}.
func (p *lsp) Cancel(dst []byte, id []byte) []byte {
	if len(id) == 0 {
		return dst
	}
	dst = append(dst, lspCancelHead...)
	dst = append(dst, id...)
	return append(dst, '}', '}')
}

// The answers to the requests an LSP server sends its client.
var (
	nullResult   = []byte("null")
	applyEditNo  = []byte(`{"applied":false,"failureReason":"rpcload does not apply edits"}`)
	showDocNo    = []byte(`{"success":false}`)
	configNoItem = "invalid params: workspace/configuration needs params.items, an array"
)

// AnswerServerRequest answers, as LSP 3.17 defines the results:
//
//   - workspace/configuration: an array of nulls, one per params.items
//     element (no setting is configured); -32602 when items is not an array.
//   - workspace/workspaceFolders: the workspace folder, or null without one.
//   - window/workDoneProgress/create, client/registerCapability,
//     client/unregisterCapability, window/showMessageRequest (no action
//     chosen) and every workspace/.../refresh: null.
//   - workspace/applyEdit: {"applied":false,...}; window/showDocument:
//     {"success":false}.
//   - anything else: -32601.
func (p *lsp) AnswerServerRequest(dst []byte, m *wire.Message) []byte {
	dst, done := answerMalformed(dst, m)
	if done {
		return dst
	}
	var buf [64]byte
	name, _ := wire.Unquote(buf[:0], m.Method)
	switch method := string(name); method {
	case "workspace/configuration":
		items, ok := member(wire.TrimSpace(m.Params), "items")
		if !ok || items[0] != '[' {
			return wire.AppendError(dst, m.ID, wire.CodeInvalidParams, configNoItem, nil)
		}
		n := 0
		for off, ok := 0, true; ; n++ {
			if _, off, ok = wire.NextElement(items, off); !ok {
				break
			}
		}
		result := make([]byte, 0, 2+5*n)
		result = append(result, '[')
		for i := range n {
			if i > 0 {
				result = append(result, ',')
			}
			result = append(result, "null"...)
		}
		return wire.AppendResult(dst, m.ID, append(result, ']'))
	case "workspace/workspaceFolders":
		return wire.AppendResult(dst, m.ID, p.folders)
	case "window/workDoneProgress/create", "client/registerCapability",
		"client/unregisterCapability", "window/showMessageRequest":
		return wire.AppendResult(dst, m.ID, nullResult)
	case "workspace/applyEdit":
		return wire.AppendResult(dst, m.ID, applyEditNo)
	case "window/showDocument":
		return wire.AppendResult(dst, m.ID, showDocNo)
	default:
		if rest, ok := strings.CutPrefix(method, "workspace/"); ok && len(rest) > len("/refresh") && strings.HasSuffix(rest, "/refresh") {
			return wire.AppendResult(dst, m.ID, nullResult)
		}
	}
	return answerNotFound(dst, m)
}

// DidOpen returns the textDocument/didOpen notification that opens the file
// at the absolute path with text as its content (version 1), so that
// requests about it (hover, definition, documentSymbol, ...) can follow.
func DidOpen(path string, text []byte) Step {
	p := append([]byte(`{"textDocument":{"uri":`), wire.AppendString(nil, FileURI(path))...)
	p = append(p, `,"languageId":`...)
	p = wire.AppendString(p, LanguageID(path))
	p = append(p, `,"version":1,"text":`...)
	p = wire.AppendString(p, string(text))
	p = append(p, '}', '}')
	return Step{Method: "textDocument/didOpen", Params: p, Notification: true}
}

// languageIDs maps file extensions to LSP language identifiers (the
// specification's list of well-known ones).
var languageIDs = map[string]string{
	".go": "go", ".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript",
	".tsx": "typescriptreact", ".jsx": "javascriptreact", ".rs": "rust", ".c": "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".rb": "ruby", ".php": "php",
	".cs": "csharp", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".md": "markdown",
	".html": "html", ".css": "css", ".sh": "shellscript", ".lua": "lua", ".zig": "zig",
	".swift": "swift", ".kt": "kotlin", ".scala": "scala", ".sql": "sql", ".toml": "toml",
}

// LanguageID returns the LSP language identifier of a file from its
// extension, or "plaintext".
func LanguageID(path string) string {
	if id, ok := languageIDs[strings.ToLower(filepath.Ext(path))]; ok {
		return id
	}
	return "plaintext"
}
