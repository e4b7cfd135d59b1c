package fuzz

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// caseFile is case.json: the input's frames (and wire bytes), each as text
// for people and base64 for tools (frames may hold bytes that are not UTF-8).
type caseFile struct {
	Schema string      `json:"schema"`
	Frames []bytesText `json:"frames"`
	Wire   *bytesText  `json:"wire,omitempty"`
}

type bytesText struct {
	Text   string `json:"text"`
	Base64 string `json:"base64"`
}

func toBytesText(b []byte) bytesText {
	t := string(b)
	if !utf8.ValidString(t) {
		t = strings.ToValidUTF8(t, "\uFFFD")
	}
	return bytesText{Text: t, Base64: base64.StdEncoding.EncodeToString(b)}
}

func encodeCase(c mutate.Case) ([]byte, error) {
	cf := caseFile{Schema: CaseSchema, Frames: []bytesText{}}
	for _, f := range c.Frames {
		cf.Frames = append(cf.Frames, toBytesText(f))
	}
	if c.Wire != nil {
		w := toBytesText(c.Wire)
		cf.Wire = &w
	}
	b, err := json.MarshalIndent(cf, "", "  ")
	return append(b, '\n'), err
}

// decodeCase reads case.json.
func decodeCase(data []byte, path string) (mutate.Case, error) {
	var cf caseFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return mutate.Case{}, fmt.Errorf("%s: not a case file: %w", path, err)
	}
	if cf.Schema != CaseSchema {
		return mutate.Case{}, fmt.Errorf("%s: schema %q, want %q", path, cf.Schema, CaseSchema)
	}
	var c mutate.Case
	for i, f := range cf.Frames {
		b, err := base64.StdEncoding.DecodeString(f.Base64)
		if err != nil {
			return mutate.Case{}, fmt.Errorf("%s: frame %d: bad base64: %w", path, i+1, err)
		}
		c.Frames = append(c.Frames, b)
	}
	if cf.Wire != nil {
		b, err := base64.StdEncoding.DecodeString(cf.Wire.Base64)
		if err != nil {
			return mutate.Case{}, fmt.Errorf("%s: wire: bad base64: %w", path, err)
		}
		c.Wire = b
	}
	if len(c.Frames) == 0 && c.Wire == nil {
		return mutate.Case{}, fmt.Errorf("%s: no frames", path)
	}
	return c, nil
}

// maxReplyFile bounds reply.txt.
const maxReplyFile = 64 << 10

// writeFindingDir writes a finding's files, each atomically: input.bin
// (input-N.bin for the further frames of an HTTP case), case.json,
// reply.txt and finding.json.
func writeFindingDir(dir string, f *Finding, c mutate.Case, reply []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := inputFiles(f.Target, c)
	for name, data := range files {
		if err := stats.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	cj, err := encodeCase(c)
	if err != nil {
		return err
	}
	if err := stats.WriteFileAtomic(filepath.Join(dir, "case.json"), cj); err != nil {
		return err
	}
	if len(reply) > maxReplyFile {
		reply = reply[:maxReplyFile]
	}
	if err := stats.WriteFileAtomic(filepath.Join(dir, "reply.txt"), reply); err != nil {
		return err
	}
	return writeFindingJSON(dir, f)
}

func writeFindingJSON(dir string, f *Finding) error {
	f.Schema = FindingSchema
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return stats.WriteFileAtomic(filepath.Join(dir, "finding.json"), append(b, '\n'))
}

// ReadFinding reads finding.json and case.json of a finding directory.
func ReadFinding(dir string) (*Finding, mutate.Case, error) {
	path := filepath.Join(dir, "finding.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, mutate.Case{}, fmt.Errorf("%s is not a finding directory: %w", dir, err)
	}
	var f Finding
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, mutate.Case{}, fmt.Errorf("%s: %w", path, err)
	}
	if f.Schema != FindingSchema {
		return nil, mutate.Case{}, fmt.Errorf("%s: schema %q, want %q", path, f.Schema, FindingSchema)
	}
	cpath := filepath.Join(dir, "case.json")
	cdata, err := os.ReadFile(cpath)
	if err != nil {
		return nil, mutate.Case{}, err
	}
	c, err := decodeCase(cdata, cpath)
	if err != nil {
		return nil, mutate.Case{}, err
	}
	return &f, c, nil
}

// inputFiles are the exact bytes sent: for a stream, everything written
// (frames with their framing, or the wire bytes); for HTTP, one body per
// file.
func inputFiles(t TargetInfo, c mutate.Case) map[string][]byte {
	if t.Command == nil && isHTTPURL(t.URL) {
		files := map[string][]byte{}
		for i, f := range c.Frames {
			name := "input.bin"
			if i > 0 {
				name = "input-" + strconv.Itoa(i+1) + ".bin"
			}
			files[name] = f
		}
		return files
	}
	return map[string][]byte{"input.bin": streamBytes(t.Framing, c)}
}

func isHTTPURL(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// streamBytes is what a stream exchange writes for c (without the sync
// request): the wire bytes, or each frame framed. WebSocket messages are
// written one per line, as websocat sends lines.
func streamBytes(framing string, c mutate.Case) []byte {
	if c.Wire != nil {
		return c.Wire
	}
	var b []byte
	for _, f := range c.Frames {
		if framing == transport.ContentLength.String() {
			b = transport.AppendCLHeader(b, len(f))
			b = append(b, f...)
			continue
		}
		b = append(append(b, f...), '\n')
	}
	return b
}
