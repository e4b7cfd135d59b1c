package fuzz

// The LSP side of API-aware fuzzing (issue 18): the workspace's documents
// opened on every connection after the handshake, the server's
// capabilities read off the first connection's initialize result, the API
// made of them (apispec.FromLSP), and the sequences of a real session an
// API call takes part in: a didChange of its document before it, a
// cancellation after it (LSP and MCP).

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// Bounds on the workspace's documents opened on each connection: a
// handshake that sends megabytes would make every restart of a child slow,
// and a few documents are enough to ask about.
const (
	maxWorkspaceFiles     = 8
	maxWorkspaceFileBytes = 64 << 10
)

// Shares of the API's calls (apiInput) sent in a session's sequence: one
// in lspChangeShare after a didChange of its document (LSP), one in
// cancelShare followed by its cancellation (LSP, MCP).
const (
	lspChangeShare = 4
	cancelShare    = 8
)

// lspDocs are the workspace's documents a run opens on every LSP
// connection (Config.ProfileOptions.Workspace).
type lspDocs struct {
	files []apispec.LSPFile
	open  []profile.Step // their textDocument/didOpen, version 1
	// version is the last document version handed out: didOpen's 1, then
	// each didChange's, run-wide, so that on any connection they grow.
	version atomic.Int64
}

// openWorkspace reads the documents of an LSP run's workspace, or returns
// nil without one (or for another profile). The files are taken in
// lexical order of their paths (filepath.WalkDir), hidden directories
// skipped: the regular files with a language LSP names (profile.LanguageID
// is not plaintext) of valid UTF-8, at most maxWorkspaceFileBytes each,
// maxWorkspaceFiles in all. A workspace that cannot be read is an error.
func openWorkspace(cfg *Config) (*lspDocs, error) {
	dir := cfg.ProfileOptions.Workspace
	if cfg.Profile != profile.LSP || dir == "" {
		return nil, nil
	}
	docs := &lspDocs{}
	docs.version.Store(1)
	errEnough := errors.New("enough files")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != dir && d.Name()[0] == '.':
			return filepath.SkipDir // .git and the like
		case !d.Type().IsRegular() || profile.LanguageID(path) == "plaintext":
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxWorkspaceFileBytes {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil || len(text) > maxWorkspaceFileBytes || !utf8.Valid(text) {
			return nil
		}
		docs.files = append(docs.files, apispec.LSPFile{URI: profile.FileURI(path), Text: text})
		docs.open = append(docs.open, profile.DidOpen(path, text))
		if len(docs.files) == maxWorkspaceFiles {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, fmt.Errorf("the LSP workspace: %w", err)
	}
	return docs, nil
}

// openSteps are the steps every LSP connection runs after the handshake:
// the didOpen of each document (nil without a workspace).
func (d *dialer) openSteps() []profile.Step {
	if d.lsp == nil {
		return nil
	}
	return d.lsp.open
}

// noteInitialize keeps the result of the first initialize request a
// handshake sent (msg) and got (reply): an LSP server's InitializeResult,
// whose capabilities say which requests it serves.
func (d *dialer) noteInitialize(msg, reply []byte) {
	if d.initResult.Load() != nil {
		return
	}
	var m wire.Message
	if wire.Scan(msg, &m); !stringIs(m.Method, "initialize") {
		return
	}
	if wire.Scan(reply, &m); m.Kind != wire.KindResult {
		return
	}
	result := bytes.Clone(m.Result)
	d.initResult.CompareAndSwap(nil, &result)
}

// stringIs reports whether the raw JSON string raw decodes to s.
func stringIs(raw []byte, s string) bool {
	var buf [64]byte
	v, ok := wire.Unquote(buf[:0], raw)
	return ok && string(v) == s
}

// discoverLSP makes the API of an LSP server: the requests its
// capabilities announce, about the workspace's documents.
func (r *run) discoverLSP() (*apispec.API, error) {
	res := r.d.initResult.Load()
	if res == nil {
		return nil, errors.New("--discover: no initialize result was seen (an LSP server's capabilities come with the handshake of a stream connection)")
	}
	caps, ok := wire.Member(*res, `"capabilities"`)
	if !ok {
		return nil, errors.New("--discover: the initialize result has no capabilities")
	}
	var files []apispec.LSPFile
	if r.d.lsp != nil {
		files = r.d.lsp.files
	}
	api, err := apispec.FromLSP(caps, files)
	if err != nil {
		return nil, fmt.Errorf("--discover: %w", err)
	}
	return api, nil
}

// apiSession puts call, the frame of a fresh call of m with params, in a
// sequence of the session it is sent in: for the lsp profile, one in
// lspChangeShare after a textDocument/didChange of its document (the whole
// text again, a new version); for lsp and mcp, one in cancelShare followed
// by its cancellation ($/cancelRequest, notifications/cancelled), the call
// then with an id of its own (a reply it may or may not get is never taken
// for another call's). The oracles of the API do not judge a cancelled
// call (apiExchange).
func (r *run) apiSession(w *worker, m *apispec.Method, params, call []byte) mutate.Case {
	c := mutate.Case{Frames: [][]byte{call}}
	prof := r.cfg.Profile
	if prof != profile.LSP && prof != profile.MCP {
		return c
	}
	if prof == profile.LSP && r.d.lsp != nil && w.apiRand.IntN(lspChangeShare) == 0 {
		if change := r.d.lsp.didChange(w, params); change != nil && len(change) <= r.cfg.MaxFrame {
			c.Frames = [][]byte{change, call}
		}
	}
	if w.apiRand.IntN(cancelShare) == 0 {
		id := strconv.AppendUint(nil, 1000+uint64(w.apiRand.Uint32()), 10)
		c.Frames[len(c.Frames)-1] = r.callFrame(m, id, params)
		c.Frames = append(c.Frames, r.d.prof.Cancel(nil, id))
	}
	return c
}

// didChange returns the textDocument/didChange notification that gives
// the document params name (else one of the workspace's) its whole text
// again, with the next version.
func (l *lspDocs) didChange(w *worker, params []byte) []byte {
	if len(l.files) == 0 {
		return nil
	}
	f := l.files[w.apiRand.IntN(len(l.files))]
	if doc, ok := wire.Member(params, `"textDocument"`); ok {
		if uri, ok := wire.Member(doc, `"uri"`); ok {
			for _, g := range l.files {
				if stringIs(uri, g.URI) {
					f = g
				}
			}
		}
	}
	b := []byte(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":`)
	b = wire.AppendString(b, f.URI)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, l.version.Add(1), 10)
	b = append(b, `},"contentChanges":[{"text":`...)
	b = wire.AppendString(b, string(f.Text))
	return append(b, `}]}}`...)
}

// cancelledLater reports whether a frame after frames[i] cancels the
// request id: an LSP $/cancelRequest naming it by params.id, or MCP's
// notifications/cancelled by params.requestId, whatever the profile (a
// server of another may read either), names decoded as a server reads
// them and ids compared by value. A cancelled call may be refused for
// being cancelled (LSP's RequestCancelled, -32800) or go unanswered
// (MCP), so its reply is no verdict on its params.
func cancelledLater(frames [][]byte, i int, id []byte) bool {
	var m wire.Message
	for _, f := range frames[i+1:] {
		wire.Scan(f, &m)
		member := ""
		switch {
		case stringIs(m.Method, "$/cancelRequest"):
			member = "id"
		case stringIs(m.Method, "notifications/cancelled"):
			member = "requestId"
		default:
			continue
		}
		it, ok := wire.ObjectMembers(m.Params)
		if !ok {
			continue
		}
		for name, value, more := it.Next(); more; name, value, more = it.Next() {
			if stringIs(name, member) && wire.CompareIDs(id, wire.TrimSpace(value), true) != wire.IDDifferent {
				return true
			}
		}
	}
	return false
}

// sessionAltered reports whether a frame of an input starts or ends a
// session (initialize, initialized, shutdown, exit: pr.Lifecycle), or
// opens or closes an LSP document (reshapes). The schemas of the API's
// calls are made for the session a connection's handshake opened, with
// the workspace's documents open (textDocument.uri is one of them): in
// another, a server refuses a call for the session's state (LSP's
// ServerNotInitialized -32002 before initialize, InvalidRequest after
// shutdown, an unknown document after didClose) or answers one about a
// document the input opened itself, and neither is a verdict on the
// params.
func sessionAltered(frames [][]byte, pr *profileRules) bool {
	var m wire.Message
	for _, f := range frames {
		wire.Scan(f, &m)
		if pr.Lifecycle(m.Method) || opensOrCloses(&m) {
			return true
		}
	}
	return false
}

// reshapes reports whether input c opens or closes a document of an
// API-aware LSP run: the documents its connection has open are then no
// longer the workspace's, which the API's calls are judged about, so the
// connection is not used for another input (as after a lifecycle
// message). Inputs that do are mutations that lost their initialize (the
// seeds that open documents start a session of their own): few.
func (r *run) reshapes(c mutate.Case) bool {
	if r.api == nil || r.d.lsp == nil {
		return false
	}
	var m wire.Message
	for _, f := range c.Frames {
		if wire.Scan(f, &m); opensOrCloses(&m) {
			return true
		}
	}
	return false
}

// opensOrCloses reports whether m is an LSP textDocument/didOpen or
// didClose.
func opensOrCloses(m *wire.Message) bool {
	return stringIs(m.Method, "textDocument/didOpen") || stringIs(m.Method, "textDocument/didClose")
}
