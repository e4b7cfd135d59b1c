package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/rpcload/rpcload/internal/soak"
)

// readme is README.md of this module.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeFirstScreen: a new user finds on the README's first screen how
// to install from a clone, the demo, and how to load-test their own HTTP
// endpoint with an auth header; a table of contents follows, and each of
// its links names a heading of the README. (TestDocCommands runs the
// commands.)
func TestReadmeFirstScreen(t *testing.T) {
	text := readme(t)
	lines := strings.Split(text, "\n")
	first := strings.Join(lines[:min(len(lines), 45)], "\n")
	for _, want := range []string{"## Quick start", "go install ./cmd/...", "Load-test your own HTTP endpoint", "rpcload run https://", "-H 'Authorization: Bearer"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first 45 lines of README.md lack %q", want)
		}
	}
	toc := strings.Index(text, "## Contents")
	if toc < 0 || toc > strings.Index(text, "## Set up and run") {
		t.Fatal("README.md has no ## Contents before its sections")
	}
	anchors := map[string]bool{}
	for _, l := range lines {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			anchors[slug(h)] = true
		} else if h, ok := strings.CutPrefix(l, "### "); ok {
			anchors[slug(h)] = true
		}
	}
	tocText := text[toc:]
	tocText = tocText[:strings.Index(tocText[3:], "\n## ")+3]
	links := regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(tocText, -1)
	if len(links) < 10 {
		t.Fatalf("the contents link %d sections", len(links))
	}
	for _, l := range links {
		if !anchors[l[1]] {
			t.Errorf("the contents link #%s, which is no heading of README.md", l[1])
		}
	}
	for h := range anchors {
		if isTopHeading(lines, h) && !strings.Contains(tocText, "(#"+h+")") {
			t.Errorf("section #%s is missing from the contents", h)
		}
	}
}

// isTopHeading reports whether the ## heading of anchor a exists (the
// contents list every one of those).
func isTopHeading(lines []string, a string) bool {
	for _, l := range lines {
		if h, ok := strings.CutPrefix(l, "## "); ok && slug(h) == a && h != "Contents" && h != "Quick start" {
			return true
		}
	}
	return false
}

// slug is GitHub's anchor of a heading: lower case, spaces to hyphens,
// punctuation other than - and _ dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestReadmeAgreesWithCode: what the README says of the demo's rate and the
// interval log's unit is what the code does.
func TestReadmeAgreesWithCode(t *testing.T) {
	text := readme(t)
	if demoRate != 5000 || !strings.Contains(text, "open loop, 5,000 req/s of echo") {
		t.Errorf("the demo runs at %d req/s; README.md must say so (\"open loop, 5,000 req/s of echo\")", demoRate)
	}
	if strings.Contains(text, "| `-r, --rate R` | 1000 |") {
		t.Error("README.md gives --rate's default as 1000 without the demo's 5000")
	}
	// The interval log holds microseconds: HistogramLogProcessor, which
	// assumes nanoseconds, needs a ratio of 1000 to print milliseconds.
	if soak.MaxValueUnitRatio != 1000 || !strings.Contains(text, "-outputValueUnitRatio 1000") {
		t.Errorf("README.md must tell HistogramLogProcessor users -outputValueUnitRatio %g (the log holds microseconds)", soak.MaxValueUnitRatio)
	}
}
