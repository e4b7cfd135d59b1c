package interop

// The input tests of fuzzOracleFalsePositives (fuzz_test.go): what an
// oracle false positive's input must look like, besides its rule and note.

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// inputMatches returns an input test: re matches the input.
func inputMatches(expr string) func([]byte) bool {
	re := regexp.MustCompile(expr)
	return re.Match
}

// loneSurrogate matches a \uD800-\uDFFF escape in JSON text.
var loneSurrogate = regexp.MustCompile(`\\u[dD][89a-fA-F][0-9a-fA-F]{2}`)

// badText reports whether an input holds invalid UTF-8 or a surrogate
// escape, which RFC 8259 (§8.1, §8.2) leaves a parser free to handle.
func badText(input []byte) bool {
	return !utf8.Valid(input) || loneSurrogate.Match(input)
}

// severalLines reports whether an input holds more than one line with
// something on it: on a newline-delimited stream, more than one message.
func severalLines(input []byte) bool {
	n := 0
	for line := range bytes.SplitSeq(input, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n > 1
}

// repeatedID reports whether two lines of an input (messages on a
// newline-delimited stream) carry the same id, other than null.
func repeatedID(input []byte) bool {
	seen := map[string]bool{}
	for line := range bytes.SplitSeq(input, []byte{'\n'}) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
			continue
		}
		if seen[string(m.ID)] {
			return true
		}
		seen[string(m.ID)] = true
	}
	return false
}

// bigBatchRepeatedID reports whether an input is one batch of more
// elements than the oracle aligns element by element (maxAlign in
// internal/fuzz/judge.go: 2048 frames times replies, so 46 and up) in
// which two elements carry the same id.
func bigBatchRepeatedID(input []byte) bool {
	var batch []struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(bytes.TrimSpace(input), &batch) != nil || len(batch)*len(batch) <= 2048 {
		return false
	}
	seen := map[string]bool{}
	for _, e := range batch {
		if id := string(e.ID); id != "" && id != "null" {
			if seen[id] {
				return true
			}
			seen[id] = true
		}
	}
	return false
}

// TestFuzzFalsePositiveInputs checks the input tests of the oracle false
// positives on inputs seen in the runs.
func TestFuzzFalsePositiveInputs(t *testing.T) {
	big := func(last string) []byte {
		return []byte("[" + strings.Repeat(`{"id":null},`, 60) + `{"id":0},` + last + "]")
	}
	cases := []struct {
		name  string
		test  func([]byte) bool
		input string
		want  bool
	}{
		{"invalid UTF-8 in an id", badText, "{\"method\":\"o\",\"id\":\"\xbf\"}", true},
		{"lone surrogate escape", badText, `{"jsonrpc":"2.0","method":"ping","id":"\ud800"}`, true},
		{"valid text", badText, `{"jsonrpc":"2.0","method":"ping","id":"\u00e9"}`, false},
		{"big batch, id 0 twice", bigBatchRepeatedID, string(big(`{"jsonrpc":"2.0","method":"l","params":0,"id":0}`)), true},
		{"big batch, ids distinct", bigBatchRepeatedID, string(big(`{"jsonrpc":"2.0","method":"l","id":1}`)), false},
		{"small batch, id 0 twice", bigBatchRepeatedID, `[{"id":0},{"id":0}]`, false},
		{"not a batch", bigBatchRepeatedID, `{"id":0}`, false},
		{"repeated id member", inputMatches(`\{[^{}]*"id"\s*:[^{}]*"id"\s*:`), `[{"id":[],"id":1},{"id":1}]`, true},
		{"one id member each", inputMatches(`\{[^{}]*"id"\s*:[^{}]*"id"\s*:`), `[{"id":1},{"id":1}]`, false},
		{"two messages", severalLines, "[[],[]]\n[{\"id\":null,\"id\":\"\"},0]\n", true},
		{"id 14 twice", repeatedID, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/call\"}\n{\"jsonrpc\":\"2.0\",\"id\":14,\"p\":0}\n", true},
		{"ids distinct, null twice", repeatedID, "{\"id\":14}\n{\"id\":15}\n{\"id\":null}\n{\"id\":null}\n{\"method\":\"x\"}\n", false},
		{"one message and blank lines", severalLines, "\n\n{\"method\":\"e\"}\n \n", false},
	}
	for _, c := range cases {
		if got := c.test([]byte(c.input)); got != c.want {
			t.Errorf("%s: %q: got %v, want %v", c.name, c.input, got, c.want)
		}
	}
}
