package fuzz

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// idPattern is the form of a finding id: a rule and ten hex digits.
var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*-[0-9a-f]{10}$`)

// ReadBaseline reads the ids of accepted findings from path: either the
// summary.json of an earlier run (its findings and its baselined ones are
// all accepted), or a text file of finding ids, one per line, where blank
// lines and text after '#' are ignored. Errors name the file and line.
func ReadBaseline(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	return ParseBaseline(data, path)
}

// ParseBaseline is ReadBaseline on the file's contents; name is used in
// errors.
func ParseBaseline(data []byte, name string) (map[string]bool, error) {
	ids := map[string]bool{}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		var s Summary
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("--baseline %s: not a summary.json: %w", name, err)
		}
		if s.Schema != SummarySchema {
			return nil, fmt.Errorf("--baseline %s: schema %q, want %q", name, s.Schema, SummarySchema)
		}
		for _, f := range s.Findings {
			ids[f.ID] = true
		}
		for _, b := range s.Baselined {
			ids[b.ID] = true
		}
		return ids, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if !idPattern.MatchString(text) {
			return nil, fmt.Errorf("--baseline %s:%d: %q is not a finding id (like crash-3fa2c1d0aa)", name, line, text)
		}
		ids[text] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", name, err)
	}
	return ids, nil
}
