package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The commands of README.md and docs/*.md, as TestDocCommands reads them.
//
// A fenced block whose info string is sh, bash, shell or console holds
// commands. In sh, bash and shell blocks every line is a command, a line
// ending in a backslash continues on the next, and # starts a comment. In
// console blocks only lines starting with "$ " are commands (the prompt is
// not part of it); every other line is output. Blocks fenced as text (or
// with no info string) are transcripts and are not run.

// docCmd is one command of a fenced block.
type docCmd struct {
	where string   // file:line of its first line
	text  string   // as written, continuation lines joined
	argv  []string // its words, quotes removed
	bg    bool     // it ends in &: it runs in the background
	err   error    // it is not a simple command
}

// docBlock is one fenced block of commands; its commands run in order,
// the later ones using what the earlier ones started or wrote.
type docBlock struct {
	where string
	cmds  []docCmd
}

// docShellLangs are the info strings of fenced blocks that hold commands.
var docShellLangs = []string{"sh", "bash", "shell", "console"}

// docFiles are the documents whose commands are tested: README.md and
// docs/*.md, relative to this package's directory.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "..", "README.md")}, files...)
}

// readDocBlocks reads the command blocks of one Markdown file.
func readDocBlocks(path string) ([]docBlock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(filepath.ToSlash(path), "../../")
	var blocks []docBlock
	var cur *docBlock
	lang, pending, pendingLine := "", "", 0
	for i, line := range strings.Split(string(data), "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			if lang == "" && cur == nil {
				info := strings.Fields(strings.TrimPrefix(trim, "```") + " ")
				if len(info) > 0 && slices.Contains(docShellLangs, info[0]) {
					lang = info[0]
					cur = &docBlock{where: fmt.Sprintf("%s:%d", name, i+1)}
				} else {
					lang = "-" // a fence of another kind: skip to its end
				}
				continue
			}
			if pending != "" {
				return nil, fmt.Errorf("%s:%d: the block ends inside a continued line", name, pendingLine)
			}
			if cur != nil {
				blocks = append(blocks, *cur)
			}
			lang, cur = "", nil
			continue
		}
		if cur == nil {
			continue
		}
		if pending == "" {
			if lang == "console" {
				if !strings.HasPrefix(line, "$ ") {
					continue // output
				}
				line = strings.TrimPrefix(line, "$ ")
			}
			pendingLine = i + 1
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
			pending += cont + " "
			continue
		}
		text := strings.TrimSpace(pending + line)
		pending = ""
		argv, bg, err := shellWords(text)
		if len(argv) > 0 || err != nil {
			cur.cmds = append(cur.cmds, docCmd{where: fmt.Sprintf("%s:%d", name, pendingLine), text: text, argv: argv, bg: bg, err: err})
		}
	}
	return blocks, nil
}

// shellWords splits a simple command as sh would: words separated by
// blanks, single quotes literal, double quotes and backslashes as in sh, a
// # at the start of a word beginning a comment, and a final & sending it to
// the background. Anything else a shell would interpret (pipes, redirects,
// lists, expansions, assignments) is an error: a documented command must
// be one program and its arguments, so it runs as written in any shell.
func shellWords(s string) (argv []string, bg bool, err error) {
	var word strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			argv = append(argv, word.String())
		}
		word.Reset()
		inWord = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			return argv, bg, nil
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false, errors.New("unterminated single quote")
			}
			word.WriteString(s[i+1 : i+1+end])
			inWord, i = true, i+1+end
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0:
					i++
				case s[i] == '$' || s[i] == '`':
					return nil, false, fmt.Errorf("an expansion (%c) in double quotes", s[i])
				}
				word.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, false, errors.New("unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 == len(s) {
				return nil, false, errors.New("a backslash at the end")
			}
			i++
			word.WriteByte(s[i])
			inWord = true
		case c == '&' && strings.TrimSpace(s[i+1:]) == "" || c == '&' && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "#"):
			flush()
			return argv, true, nil
		case strings.IndexByte("|;<>&()`$*?[", c) >= 0:
			return nil, false, fmt.Errorf("%q: not a simple command (the shell would interpret it)", c)
		case c == '=' && len(argv) == 0 && !strings.HasPrefix(word.String(), "-"):
			return nil, false, errors.New("a variable assignment before the command")
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return argv, bg, nil
}

// TestShellWords pins the splitting TestDocCommands relies on.
func TestShellWords(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		bg      bool
		wantErr bool
	}{
		{`rpcload run --params '[1,"a"]' -o r.json`, []string{"rpcload", "run", "--params", `[1,"a"]`, "-o", "r.json"}, false, false},
		{`rpcload serve --tcp 127.0.0.1:9090 &   # a server`, []string{"rpcload", "serve", "--tcp", "127.0.0.1:9090"}, true, false},
		{`rpcload   # the demo`, []string{"rpcload"}, false, false},
		{`# only a comment`, nil, false, false},
		{`x "a \"b\" c" d\ e`, []string{"x", `a "b" c`, "d e"}, false, false},
		{`x --threshold 'p99{method=eth_call}<20ms' --args '{"q":"x"}'`, []string{"x", "--threshold", "p99{method=eth_call}<20ms", "--args", `{"q":"x"}`}, false, false},
		{`x --diff-ignore '$.result.timestamp' a#b`, []string{"x", "--diff-ignore", "$.result.timestamp", "a#b"}, false, false},
		{`x ''`, []string{"x", ""}, false, false},
		{`rpcload serve --stdio [--framing content-length]`, nil, false, true},
		{`x | y`, nil, false, true},
		{`x > out`, nil, false, true},
		{`x $WORK/a`, nil, false, true},
		{`x "$HOME"`, nil, false, true},
		{`X=1 x`, nil, false, true},
		{`x 'open`, nil, false, true},
		{`x && y`, nil, false, true},
	}
	for _, tt := range tests {
		argv, bg, err := shellWords(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("shellWords(%q): error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && (!slices.Equal(argv, tt.want) || bg != tt.bg) {
			t.Errorf("shellWords(%q) = %q, bg %v; want %q, bg %v", tt.in, argv, bg, tt.want, tt.bg)
		}
	}
}

// TestReadDocBlocks pins how blocks, continuations and console output are
// read.
func TestReadDocBlocks(t *testing.T) {
	md := "intro\n```sh\nrpcload run a \\\n  --method x   # why\n# a comment\n\n```\n```go\nnot a command\n```\n```console\n$ rpcload version\nrpcload dev\n```\n```text\nrpcload not run\n```\n"
	path := filepath.Join(t.TempDir(), "x.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks, err := readDocBlocks(path)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, b := range blocks {
		for _, c := range b.cmds {
			got = append(got, c.argv)
		}
	}
	want := [][]string{{"rpcload", "run", "a", "--method", "x"}, {"rpcload", "version"}}
	if len(blocks) != 2 || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("blocks %d, commands %q; want 2, %q", len(blocks), got, want)
	}
}
