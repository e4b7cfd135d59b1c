package native

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/mutate"
)

// CaseFile is a literal case as rpcfuzz minimize writes it into a
// package's testdata/rpcfuzz/ and rpcfuzz.Replay reads it: the messages
// themselves, readable, with what they were found as.
type CaseFile struct {
	// FuzzTest is the rpcfuzz.Fuzz test the case fails.
	FuzzTest string `json:"fuzz_test"`
	// Rule is the rule it broke when it was written.
	Rule string `json:"rule"`
	// From is the native failure it was minimized from.
	From string `json:"from,omitempty"`
	// Messages are sent in order.
	Messages []Text `json:"messages"`
	// Wire, when present, is written to a stream instead of the framed
	// messages (framing damage).
	Wire *Text `json:"wire,omitempty"`
}

// Text is bytes as a JSON string when they are UTF-8 (every message a
// mutation did not make invalid), else as {"base64": "..."}, so that the
// file is readable and still holds any bytes exactly.
type Text []byte

type base64Text struct {
	Base64 string `json:"base64"`
}

// MarshalJSON writes t as a string, or as base64 when it is not UTF-8.
func (t Text) MarshalJSON() ([]byte, error) {
	if utf8.Valid(t) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(string(t)); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
	}
	return json.Marshal(base64Text{Base64: base64.StdEncoding.EncodeToString(t)})
}

// UnmarshalJSON reads either form MarshalJSON writes.
func (t *Text) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*t = Text(s)
		return nil
	}
	var b base64Text
	if err := json.Unmarshal(data, &b); err != nil {
		return errors.New(`a message is a JSON string or {"base64": "..."}`)
	}
	raw, err := base64.StdEncoding.DecodeString(b.Base64)
	if err != nil {
		return fmt.Errorf("a message's base64: %w", err)
	}
	*t = raw
	return nil
}

// NewCaseFile holds c as a case file of fuzzTest.
func NewCaseFile(fuzzTest, rule, from string, c mutate.Case) *CaseFile {
	f := &CaseFile{FuzzTest: fuzzTest, Rule: rule, From: from, Messages: make([]Text, len(c.Frames))}
	for i, m := range c.Frames {
		f.Messages[i] = Text(m)
	}
	if c.Wire != nil {
		w := Text(c.Wire)
		f.Wire = &w
	}
	return f
}

// Case returns the messages of f.
func (f *CaseFile) Case() mutate.Case {
	var c mutate.Case
	for _, m := range f.Messages {
		c.Frames = append(c.Frames, []byte(m))
	}
	if f.Wire != nil {
		c.Wire = append([]byte{}, *f.Wire...)
	}
	return c
}

// Marshal returns the file's text: indented JSON, HTML characters as
// they are.
func (f *CaseFile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadCaseFile reads a case file; one with no message and no wire bytes
// is an error.
func ReadCaseFile(path string) (*CaseFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f CaseFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Messages) == 0 && f.Wire == nil {
		return nil, fmt.Errorf("%s: no message", path)
	}
	return &f, nil
}
