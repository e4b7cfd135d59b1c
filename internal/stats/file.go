package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// WriteJSONFile writes r to path as WriteFileAtomic writes: atomically
// (into a temporary file in the same directory, synced, then renamed over
// path: a crash or a full disk leaves either the old file or the new one,
// never half of one), or in place when path is not a regular file.
func WriteJSONFile(path string, r *Result) error {
	data, err := encodeResult(r)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data)
}

// WriteJSON writes r to w as WriteJSONFile writes it to a file, secrets
// replaced: for a result sent to stdout (-o -).
func WriteJSON(w io.Writer, r *Result) error {
	data, err := encodeResult(r)
	if err != nil {
		return err
	}
	_, err = w.Write(fileRedactor().Bytes(data))
	return err
}

func encodeResult(r *Result) ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("stats: encoding result: %w", err)
	}
	return append(data, '\n'), nil
}

// pending tracks the temporary files of the atomic writes in progress, so
// that AbortWrites can remove them when the process is about to exit in
// the middle of one (a second interrupt). Renames happen under its lock:
// once AbortWrites holds it, no write can complete any more.
var pending struct {
	mu      sync.Mutex
	temps   map[string]struct{}
	aborted bool
}

// WriteFileAtomic writes data to path through a temporary file and a rename.
// Secret values registered with SetFileRedactor are replaced first: every
// result, report and finding file goes through here.
//
// A rename replaces the directory entry, so it is made only over a regular
// file or a missing one. Anything else at path (a symlink, such as
// /dev/stdout; a device; a named pipe) is opened and written in place: the
// symlink stays a symlink and its target gets the data, a pipe's reader
// gets it. That write is not atomic.
func WriteFileAtomic(path string, data []byte) error {
	data = fileRedactor().Bytes(data)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := writeInPlace(path, data); err != nil {
			return fmt.Errorf("stats: writing %s: %w", path, err)
		}
		return nil
	}
	f, err := createTracked(path)
	if err != nil {
		return fmt.Errorf("stats: writing %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = commit(tmp, path)
	}
	if err != nil {
		// Removed before it is untracked: a temporary file never exists
		// untracked, so AbortWrites always finds it.
		os.Remove(tmp)
		untrack(tmp)
		return fmt.Errorf("stats: writing %s: %w", path, err)
	}
	return nil
}

// writeInPlace writes data to what path (not a regular file) leads to. A
// regular file reached through a symlink is truncated first, so none of
// its old content is left after the new; a device or a pipe has nothing to
// truncate.
func writeInPlace(path string, data []byte) error {
	pending.mu.Lock()
	aborted := pending.aborted
	pending.mu.Unlock()
	if aborted {
		return ErrAborted
	}
	flags := os.O_WRONLY | os.O_CREATE
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("it leads to a directory")
	case err == nil && fi.Mode().IsRegular(), errors.Is(err, os.ErrNotExist):
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ErrAborted is the error of a write attempted after AbortWrites.
var ErrAborted = errors.New("the process is exiting; file writes were aborted")

// createTracked creates path's temporary file and tracks it under one hold
// of the lock, so that AbortWrites (which the process calls right before
// it exits) cannot come between the two and leave the file behind.
func createTracked(path string) (*os.File, error) {
	pending.mu.Lock()
	defer pending.mu.Unlock()
	if pending.aborted {
		return nil, ErrAborted
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	if pending.temps == nil {
		pending.temps = map[string]struct{}{}
	}
	pending.temps[f.Name()] = struct{}{}
	return f, nil
}

func untrack(tmp string) {
	pending.mu.Lock()
	delete(pending.temps, tmp)
	pending.mu.Unlock()
}

// commit renames tmp over path unless the writes were aborted.
func commit(tmp, path string) error {
	pending.mu.Lock()
	defer pending.mu.Unlock()
	if pending.aborted {
		return ErrAborted
	}
	delete(pending.temps, tmp)
	return os.Rename(tmp, path)
}

// AbortWrites removes the temporary files of the atomic writes in progress
// and makes every later WriteFileAtomic fail without touching its path. A
// command calls it just before exiting at once (a second interrupt): each
// file it was writing is then either complete or absent, and no temporary
// file is left behind. It returns the paths it removed.
func AbortWrites() []string {
	pending.mu.Lock()
	defer pending.mu.Unlock()
	pending.aborted = true
	var removed []string
	for tmp := range pending.temps {
		if os.Remove(tmp) == nil {
			removed = append(removed, tmp)
		}
		delete(pending.temps, tmp)
	}
	return removed
}

// resetAbort undoes AbortWrites, for tests.
func resetAbort() {
	pending.mu.Lock()
	pending.aborted = false
	pending.mu.Unlock()
}

// ReadJSONFile reads a result file and checks its schema version. Errors
// name the file and where in it the problem is: the line and column of a
// syntax error, the JSON path of a value of the wrong type.
func ReadJSONFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return decodeResult(path, data)
}

// ParseJSON is ReadJSONFile for a result that came from elsewhere than a
// file (a shard's, over HTTP): name stands for the file in errors.
func ParseJSON(name string, data []byte) (*Result, error) {
	return decodeResult(name, data)
}

// decodeResult is ReadJSONFile after the read. The schema is checked
// first, on its own: a file of another version may differ in any field,
// and what the user must hear about then is the version.
func decodeResult(path string, data []byte) (*Result, error) {
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("stats: %s is not a result file: %s", path, jsonProblem(data, err))
	}
	switch {
	case head.Schema == nil:
		return nil, fmt.Errorf("stats: %s is not a result file: it has no \"schema\" member (schema \"\"; this rpcload reads %q)", path, Schema)
	case *head.Schema != Schema:
		return nil, fmt.Errorf("stats: %s has schema %q; this rpcload reads %q (a result file of another rpcload version: re-run it, or use the rpcload that wrote it)", path, *head.Schema, Schema)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("stats: %s is not a result file: %s", path, jsonProblem(data, err))
	}
	return &r, nil
}

// jsonProblem says what is wrong with data and where: line and column of a
// syntax error, the JSON path and line of a value of the wrong type.
func jsonProblem(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return "the file is empty"
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return fmt.Sprintf("line %d, column %d: %v", line, col, se)
	case errors.As(err, &te):
		where := "$"
		if te.Field != "" {
			where += "." + te.Field
		}
		line, col := lineCol(data, te.Offset)
		return fmt.Sprintf("%s (line %d, column %d): a JSON %s where %s was expected", where, line, col, te.Value, typeName(te))
	}
	return err.Error()
}

func typeName(te *json.UnmarshalTypeError) string {
	if te.Type == nil {
		return "another type"
	}
	switch k := te.Type.Kind().String(); k {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	default:
		return "a number (" + k + ")"
	}
}

// lineCol turns a byte offset (as encoding/json reports it: just past the
// offending byte) into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	if off > 0 {
		off-- // the offset is past the byte at fault
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// quoteInner is strconv.Quote without the quotes: how %q shows s inside.
func quoteInner(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// MinSecretLen is the length of the shortest secret value scrubbed from
// the output. A shorter one ("1", "yes") matches ordinary text and field
// names all over a report, and replacing it would wreck the report without
// hiding anything; rpcload itself never prints a secret value of any
// length, so this only bounds the scrubbing of what a server echoes.
const MinSecretLen = 6

// Redacted stands in for a secret value in every output.
const Redacted = "[REDACTED]"

// Redactor replaces secret values (secret header values, tokens from the
// environment, passwords in target URLs) with Redacted, in each form they
// could take in an output: as they are, escaped in a JSON string (with and
// without HTML escaping), escaped in HTML, quoted by %q, and URL-escaped.
// A nil *Redactor or one without secrets changes nothing. Its methods may
// be called from several goroutines.
type Redactor struct {
	forms    []string // longest first, so the longest form at a place wins
	replacer *strings.Replacer
}

// NewRedactor returns a Redactor for secrets. Values shorter than
// MinSecretLen are ignored (see there).
func NewRedactor(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var forms []string
	add := func(f string) {
		if len(f) >= MinSecretLen && !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			continue
		}
		add(s)
		if b, err := json.Marshal(s); err == nil {
			add(string(b[1 : len(b)-1]))
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(s) == nil {
			b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
			add(string(b[1 : len(b)-1]))
		}
		h := html.EscapeString(s)
		add(h)
		// html/template also escapes '+' (and NUL), which base64 tokens hold.
		add(strings.ReplaceAll(strings.ReplaceAll(h, "+", "&#43;"), "\x00", "\uFFFD"))
		add(quoteInner(s))
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Redacted)
	}
	return &Redactor{forms: forms, replacer: strings.NewReplacer(pairs...)}
}

// Active reports whether r has anything to redact.
func (r *Redactor) Active() bool { return r != nil && len(r.forms) > 0 }

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if !r.Active() {
		return s
	}
	return r.replacer.Replace(s)
}

// Bytes returns b with every secret replaced; b itself is not changed.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.Active() || !r.mayHold(b) {
		return b
	}
	return []byte(r.replacer.Replace(string(b)))
}

// mayHold is a cheap test that b may contain a form: most outputs hold
// no secret, and copying them through the replacer would be wasted.
func (r *Redactor) mayHold(b []byte) bool {
	for _, f := range r.forms {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// heldSuffix is the length of the longest end of b that is the start of
// a form but not the whole of one: what a streaming writer must hold back
// until the next write shows whether a secret continues there.
func (r *Redactor) heldSuffix(b []byte) int {
	best := 0
	for _, f := range r.forms {
		for k := min(len(f)-1, len(b)); k > best; k-- {
			if string(b[len(b)-k:]) == f[:k] {
				best = k
				break
			}
		}
	}
	return best
}

// Writer returns w wrapped so that every secret is replaced in what goes
// through it, even when a secret is split across writes. Call Flush at the
// end: it writes what was held back. Without secrets it returns a writer
// that passes everything straight through.
func (r *Redactor) Writer(w io.Writer) *RedactingWriter {
	return &RedactingWriter{w: w, r: r}
}

// RedactingWriter is an io.Writer that scrubs secrets; see Redactor.Writer.
type RedactingWriter struct {
	mu   sync.Mutex
	w    io.Writer
	r    *Redactor
	held []byte // the end of the last write: maybe the start of a secret
}

// SetRedactor replaces the secrets w scrubs: a command knows them only
// once its flags are parsed, after its output streams were wrapped.
func (w *RedactingWriter) SetRedactor(r *Redactor) {
	w.mu.Lock()
	w.r = r
	w.mu.Unlock()
}

// Write redacts p (with what was held back before it) and writes all but
// an end that may be the start of a secret. It reports len(p) on success.
func (w *RedactingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.r.Active() {
		return w.w.Write(p)
	}
	buf := w.r.Bytes(append(w.held, p...))
	k := w.r.heldSuffix(buf)
	out := buf[:len(buf)-k]
	w.held = append([]byte(nil), buf[len(buf)-k:]...)
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what was held back. The held bytes are the start of a
// secret at most, never a whole one.
func (w *RedactingWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	_, err := w.w.Write(w.held)
	w.held = nil
	return err
}

// Underlying returns the writer w wraps, so a command can still tell
// whether its stderr is a terminal.
func (w *RedactingWriter) Underlying() io.Writer { return w.w }

// fileRedact is applied by WriteFileAtomic to every file. It is process
// wide because the secrets are: one command run has one set, and every
// package that writes a file must scrub the same ones.
var fileRedact atomic.Pointer[Redactor]

// SetFileRedactor makes every later WriteFileAtomic (and WriteJSONFile)
// replace r's secrets; nil turns it off. Commands call it once, after
// parsing their flags.
func SetFileRedactor(r *Redactor) { fileRedact.Store(r) }

func fileRedactor() *Redactor { return fileRedact.Load() }

// FileRedactor returns what SetFileRedactor set, for the few files not
// written through WriteFileAtomic (the interval logs, appended as a run
// goes); nil if nothing was set.
func FileRedactor() *Redactor { return fileRedact.Load() }

// secretHeaderNames are the headers whose values are secret whatever the
// flags say.
var secretHeaderNames = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// secretNameParts make any header whose name holds one a secret one:
// X-Api-Key, X-Auth-Token, X-Amz-Security-Token, Private-Token, ...
var secretNameParts = []string{"key", "token", "secret", "auth", "password", "passwd", "credential", "session", "signature", "cookie"}

// SecretHeader reports whether the values of the header name are secret by
// default, or because extra (the --secret-header names) lists it.
func SecretHeader(name string, extra []string) bool {
	for _, n := range append(secretHeaderNames, extra...) {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	lower := strings.ToLower(name)
	for _, part := range secretNameParts {
		if strings.Contains(lower, part) {
			return true
		}
	}
	return false
}

// SecretValues returns the values of the secret headers of h (see
// SecretHeader) to give to NewRedactor: each whole value and, for
// "Scheme credentials" values (Bearer, Basic, ...), the credentials alone,
// which a server may echo without the scheme.
func SecretValues(h http.Header, extra []string) []string {
	var out []string
	for name, values := range h {
		if !SecretHeader(name, extra) {
			continue
		}
		for _, v := range values {
			out = append(out, v)
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				out = append(out, strings.TrimSpace(cred))
			}
		}
	}
	return out
}

// URLSecrets returns the password of a URL's userinfo, both as written and
// decoded, or nil: http://user:pass@host/ puts one into every report that
// names the target.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	pw, ok := u.User.Password()
	if !ok {
		// A lone user part is often a token (https://TOKEN@host/).
		return []string{u.User.Username()}
	}
	out := []string{pw}
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		if ui, _, ok := strings.Cut(rest, "@"); ok {
			if _, written, ok := strings.Cut(ui, ":"); ok && written != pw {
				out = append(out, written)
			}
		}
	}
	return out
}
