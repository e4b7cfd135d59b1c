package scenario

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics and that every problem it
// reports has a position inside the file.
func FuzzParse(f *testing.F) {
	for _, path := range exampleFiles(f) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "version: 1", "version: 1\nmix: [{method: a}]\n", "- [", "a: &a [*a]",
		full,
		"version: 1\nmix: [{method: a, params: {$int: [5, 1]}, expect: {result: {type: 3}}}]\n",
		"version: 1\nload: {stages: [{duration: 1s, rate: 1}, {duration: 1s, concurrency: 2}]}\nmix: [{method: a}]\n",
		"version: 1\nheaders: {A: \"${X}\"}\nfeeders: {r: {file: rows.csv}}\nmix: [{method: a, params: [{$feed: r.x}]}]\n",
		"version: 1\n---\nversion: 1\n", "\xff\xfe", "version: 1\nmix:\n\t- a\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	writeFile(f, dir, "rows.csv", "address,n\n0xab,1\n")
	env := func(k string) (string, bool) { return "v", k == "X" }
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data, dir, env)
		if err == nil {
			if s == nil || s.Version != 1 || len(s.Mix) == 0 {
				t.Fatalf("no error but scenario %+v", s)
			}
			return
		}
		var list Errors
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("error %T %v, want Errors", err, err)
		}
		lines := strings.Split(string(data), "\n")
		if n := len(lines); n > 1 && lines[n-1] == "" {
			lines = lines[:n-1]
		}
		for _, e := range list {
			if e.File != "f.yaml" || e.Line < 1 || e.Line > max(len(lines), 1) || e.Col < 1 {
				t.Fatalf("position outside the file (%d lines): %v", len(lines), e)
			}
			if len(lines) > 0 {
				if w := utf8.RuneCountInString(lines[e.Line-1]); e.Col > w+1 {
					t.Fatalf("column past the end of line %d (%d characters): %v", e.Line, w, e)
				}
			}
			if e.Msg == "" {
				t.Fatalf("empty message: %v", e)
			}
		}
	})
}
