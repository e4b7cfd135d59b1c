// Package corpus holds the seed inputs of rpcfuzz: JSON-RPC 2.0 envelopes,
// one per file, for each profile, embedded in the binary so that a fuzz run
// needs nothing on disk.
//
// The seeds are starting points for mutation, not tests: the examples of the
// JSON-RPC 2.0 specification in our own values, each profile's handshake and
// common calls, batches, and inputs that are tricky but valid (escapes,
// surrogate pairs, big numbers, deep but legal nesting, odd ids). Files whose
// name contains "invalid-json" are deliberately not JSON; all others are.
// See README.md for the file format.
package corpus

import (
	"bytes"
	"embed"
	"encoding/json"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

//go:embed jsonrpc mcp lsp eth tricky
var files embed.FS

// profiles are the profiles Seeds knows besides "", in a fixed order.
var profiles = []string{"jsonrpc", "mcp", "lsp", "eth"}

// Profiles returns the profile names Seeds accepts besides "".
func Profiles() []string { return slices.Clone(profiles) }

// Seed is one fuzz input: one message, or a sequence of messages sent in
// order on one connection.
type Seed struct {
	Name    string   // the file's path in the corpus, e.g. "mcp/legacy-tools-call.jsonl"
	Profile string   // the directory: jsonrpc, mcp, lsp, eth, or tricky (valid in every profile)
	Frames  [][]byte // the messages, without framing; none contains a newline
}

// seedDirs are the directories Seeds draws from for each profile: the plain
// JSON-RPC seeds and the tricky ones are valid JSON-RPC for every profile.
var seedDirs = map[string][]string{
	"jsonrpc": {"jsonrpc", "tricky"},
	"mcp":     {"jsonrpc", "tricky", "mcp"},
	"lsp":     {"jsonrpc", "tricky", "lsp"},
	"eth":     {"jsonrpc", "tricky", "eth"},
	"":        {"jsonrpc", "tricky", "mcp", "lsp", "eth"},
}

var (
	loadOnce sync.Once
	byDir    map[string][]Seed
)

// load reads every seed file once. The files are part of the binary and a
// test checks each of them, so there is nothing to report at run time: a
// file that is neither .json nor .jsonl is not a seed.
func load() {
	byDir = map[string][]Seed{}
	_ = fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return nil
		}
		frames := SplitFrames(name, data)
		if len(frames) == 0 {
			return nil
		}
		dir := path.Dir(name)
		byDir[dir] = append(byDir[dir], Seed{Name: name, Profile: dir, Frames: frames})
		return nil
	})
}

// Seeds returns the seeds for profile ("jsonrpc", "mcp", "lsp", "eth"): the
// jsonrpc and tricky seeds, then the profile's own, each group in file name
// order. "" returns all seeds; an unknown profile returns nil. The caller
// owns the result and may modify it.
func Seeds(profile string) []Seed {
	dirs, ok := seedDirs[profile]
	if !ok {
		return nil
	}
	loadOnce.Do(load)
	var out []Seed
	for _, dir := range dirs {
		for _, s := range byDir[dir] {
			frames := make([][]byte, len(s.Frames))
			for i, f := range s.Frames {
				frames[i] = bytes.Clone(f)
			}
			out = append(out, Seed{Name: s.Name, Profile: s.Profile, Frames: frames})
		}
	}
	return out
}

// Methods returns the method names the seeds of profile use (see Seeds for
// the profiles), decoded, without duplicates, sorted: the mutator's
// dictionary. Method members that are not strings are left out; an unknown
// profile returns nil.
func Methods(profile string) []string {
	if _, ok := seedDirs[profile]; !ok {
		return nil
	}
	seen := map[string]bool{}
	for _, s := range Seeds(profile) {
		for _, f := range s.Frames {
			for _, m := range frameMethods(f) {
				seen[m] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// frameMethods returns the string methods of a message or of the elements
// of a batch; nothing for a frame that is not JSON.
func frameMethods(frame []byte) []string {
	type envelope struct {
		Method *string `json:"method"`
	}
	var one envelope
	if json.Unmarshal(frame, &one) == nil {
		if one.Method != nil {
			return []string{*one.Method}
		}
		return nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(frame, &batch) != nil {
		return nil
	}
	var out []string
	for _, elem := range batch {
		var e envelope
		if json.Unmarshal(elem, &e) == nil && e.Method != nil {
			out = append(out, *e.Method)
		}
	}
	return out
}

// SplitFrames turns the contents of a seed file into its messages: a .jsonl
// file holds one message per line (blank lines are skipped, a CR before the
// LF is dropped); any other file holds one message, the whole file without
// its final line break. Frames alias data.
func SplitFrames(name string, data []byte) [][]byte {
	if !strings.HasSuffix(name, ".jsonl") {
		data = trimLineEnd(data)
		if len(data) == 0 {
			return nil
		}
		return [][]byte{data}
	}
	var frames [][]byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if line = trimLineEnd(line); len(bytes.Trim(line, " \t")) > 0 {
			frames = append(frames, line)
		}
	}
	return frames
}

// trimLineEnd drops one final LF, CRLF or CR.
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
