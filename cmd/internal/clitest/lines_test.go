package clitest

import (
	"io"
	"strings"
	"testing"
	"time"
)

// fakeT records a fatal failure instead of ending the test.
type fakeT struct {
	testing.TB
	fatal string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, a ...any) {
	f.fatal = format
	panic(f)
}

func wait(t testing.TB, l *Lines, limit time.Duration, match func(string) bool) (line string, fatal string) {
	ft := &fakeT{TB: t}
	defer func() {
		if r := recover(); r != nil {
			if r != ft {
				panic(r)
			}
			fatal = ft.fatal
		}
	}()
	return l.Wait(ft, limit, "x", match), ""
}

func TestLines(t *testing.T) {
	has := func(sub string) func(string) bool { return func(s string) bool { return strings.Contains(s, sub) } }
	pr, pw := io.Pipe()
	l := Read(pr)
	go func() {
		for _, s := range []string{"a 1", "b 2", "a 3", "c 4"} {
			io.WriteString(pw, s+"\n")
		}
		pw.Close()
	}()
	for _, tt := range []struct {
		match func(string) bool
		line  string
		fatal string
	}{
		{has("a"), "a 1", ""},
		{has("a"), "a 3", ""}, // each line once: a later wait goes on from there
		{has("c"), "c 4", ""},
		{has("b"), "", "output ended"},
	} {
		line, fatal := wait(t, l, 10*time.Second, tt.match)
		if line != tt.line || !strings.HasPrefix(fatal, tt.fatal) {
			t.Errorf("Wait = %q, fatal %q; want %q, %q", line, fatal, tt.line, tt.fatal)
		}
	}
	<-l.Done()
	if got := l.String(); got != "a 1\nb 2\na 3\nc 4\n" {
		t.Errorf("String() = %q", got)
	}
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	if _, fatal := wait(t, Read(pr2), 10*time.Millisecond, has("a")); !strings.HasPrefix(fatal, "no ") {
		t.Errorf("a wait past its limit: fatal %q", fatal)
	}
}
