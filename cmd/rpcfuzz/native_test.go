package main

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
)

// buggyServer is the server of the module nativeModule writes: correct
// JSON-RPC for what the test sends, and, when bug is set, a crash on a
// string id over 100 bytes (a fixed-size buffer indexed by the id's
// length).
const buggyServer = `package myserver

import (
	"bytes"
	"encoding/json"
)

const bug = %v

// Handle answers one JSON-RPC message.
func Handle(req []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(req, &m); err != nil {
		return []byte(` + "`" + `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "`" + `)
	}
	id, hasID := m["id"]
	if s := bytes.TrimSpace(id); bug && len(s) > 2 && s[0] == '"' {
		var idBuf [100]byte
		idBuf[len(s)-3] = s[1]
	}
	if !hasID {
		return nil
	}
	if string(m["jsonrpc"]) != ` + "`" + `"2.0"` + "`" + ` || len(m["method"]) == 0 || m["method"][0] != '"' {
		return []byte(` + "`" + `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}` + "`" + `)
	}
	return append(append([]byte(` + "`" + `{"jsonrpc":"2.0","id":` + "`" + `), id...), ` + "`" + `,"result":"ok"}` + "`" + `...)
}
`

const buggyFuzzTest = `package myserver

import (
	"testing"

	"github.com/rpcload/rpcload/rpcfuzz"
)

func FuzzRPC(f *testing.F) {
	rpcfuzz.Fuzz(f, rpcfuzz.Func(Handle), rpcfuzz.Options{Methods: []string{"echo"}})
}
`

// nativeModule lays out what docs/fuzzing-native.md assumes: a module
// (example.com/myserver, the working directory from now on) whose package
// myserver fuzzes a server with rpcfuzz, and this checkout beside it as
// ../rpcload. The environment has no network: GOPROXY=off, and
// GOFLAGS=-mod=mod for the commands the docs show without it (but for
// the one step the docs run with the network, go mod tidy: runDoc).
func nativeModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs := filepath.Join(root, "docs", "fuzzing-native.md")
	top := t.TempDir()
	if err := os.Symlink(root, filepath.Join(top, "rpcload")); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(top, "server")
	if err := os.MkdirAll(filepath.Join(mod, "myserver"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":                  "module example.com/myserver\n\ngo 1.26\n",
		"myserver/server.go":      strings.Replace(buggyServer, "%v", "true", 1),
		"myserver/server_test.go": buggyFuzzTest,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proxyBefore, flagsBefore = goEnv(t, "GOPROXY"), os.Getenv("GOFLAGS")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Chdir(mod)
	return docs
}

// proxyBefore and flagsBefore are GOPROXY and GOFLAGS before nativeModule
// took the network away: the docs' one step with the network runs with
// them.
var proxyBefore, flagsBefore string

// goEnv returns go env's value of name.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// nativeDocBlock returns the commands of the sh block of the docs that
// holds a command starting with first, each split into words.
func nativeDocBlock(t *testing.T, docs, first string) [][]string {
	t.Helper()
	data, err := os.ReadFile(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(data), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		var cmds [][]string
		found := false
		for _, line := range strings.Split(block, "\n") {
			argv := shellSplit(t, line)
			if len(argv) == 0 {
				continue
			}
			found = found || strings.HasPrefix(strings.Join(argv, " "), first)
			cmds = append(cmds, argv)
		}
		if found {
			return cmds
		}
	}
	t.Fatalf("%s: no sh block with a command %q", docs, first)
	return nil
}

// shellSplit splits a simple command line of the docs: words separated by
// blanks, single quotes literal, a # at the start of a word a comment.
func shellSplit(t *testing.T, line string) []string {
	var argv []string
	var word strings.Builder
	in, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			word.WriteByte(c)
		case c == '\'':
			quoted, in = true, true
		case c == ' ' || c == '\t':
			if in {
				argv = append(argv, word.String())
			}
			word.Reset()
			in = false
		case c == '#' && !in:
			return argv
		case c == '"' || c == '\\' || c == '$' || c == '|' || c == '>' || c == '<' || c == ';' || c == '&':
			t.Fatalf("docs command %q: %q is more shell than this test reads", line, c)
		default:
			word.WriteByte(c)
			in = true
		}
	}
	if in {
		argv = append(argv, word.String())
	}
	return argv
}

// runDoc runs one command of the docs: rpcfuzz is this command, in
// process; anything else a program on PATH. A go test -fuzz fuzzes for a
// second, not as long as the docs say.
func runDoc(t *testing.T, argv []string) (int, string) {
	t.Helper()
	if argv[0] == "rpcfuzz" {
		code, out, errOut := run(argv[1:]...)
		return code, out + errOut
	}
	argv = slices.Clone(argv)
	if i := slices.Index(argv, "-fuzztime"); i >= 0 && i+1 < len(argv) {
		argv[i+1] = "1s"
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if slices.Equal(argv, []string{"go", "mod", "tidy"}) {
		// The one step the docs run with the network (the module proxy,
		// which serves sum.golang.org's answers too): the checksums of
		// rpcload's requirements, which the offline build needs in
		// go.sum when the module cache has no record of them.
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "GOPROXY=") || strings.HasPrefix(kv, "GOFLAGS=")
		})
		cmd.Env = append(cmd.Env, "GOPROXY="+proxyBefore, "GOFLAGS="+flagsBefore)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return 0, string(out)
}

// testsRan matches go test's line for the package when its tests ran
// (passing or failing), not when it failed to build.
var testsRan = regexp.MustCompile(`(?m)^(ok|FAIL)\s+example\.com/myserver/myserver\s+[0-9.]+s`)

// TestMinimizeNative runs the commands of docs/fuzzing-native.md against
// a module of its own, end to end: fuzzing against this checkout offline
// (a replace directive, the module cache alone), then minimizing a native
// failure: a server that crashes on a string id over 100 bytes, and a
// choice stream that makes such an id in a message of over 1000 bytes. The
// literal case must come out as one message with a 101-byte id and little
// else, and the
// regression test written beside it must fail on the buggy server and
// pass on the fixed one.
func TestMinimizeNative(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and fuzzes a module's tests")
	}
	docs := nativeModule(t)
	for _, argv := range nativeDocBlock(t, docs, "go mod edit") {
		code, out := runDoc(t, argv)
		if code != 0 && !(argv[0] == "env" && code == 1 && testsRan.MatchString(out)) {
			t.Fatalf("%q: exit %d\n%s", argv, code, out)
		}
	}

	data, before := longIDStream(t)
	failure := filepath.Join("myserver", "testdata", "fuzz", "FuzzRPC", "5d1e0a12b3c4d5e6")
	if err := os.MkdirAll(filepath.Dir(failure), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(failure, fuzzcase.MarshalGoCorpus(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := nativeDocBlock(t, docs, "rpcfuzz minimize")
	if len(cmds) != 2 || cmds[1][0] != "go" {
		t.Fatalf("the minimize block of the docs: %q; want rpcfuzz minimize, then go test", cmds)
	}
	code, out := runDoc(t, cmds[0])
	if code != 0 {
		t.Fatalf("%q: exit %d\n%s", cmds[0], code, out)
	}
	t.Log(out)
	caseFile := checkMinimized(t, out, before)

	// The literal case shrinks further where a budget stopped it; here
	// nothing is left to take, and it stays as it is.
	code, out = runDoc(t, []string{"rpcfuzz", "minimize", caseFile, "--budget", "3"})
	if code != 0 || !strings.Contains(out, "stopped by the budget or the time: run rpcfuzz minimize on the literal case") {
		t.Fatalf("minimize %s --budget 3: exit %d\n%s", caseFile, code, out)
	}
	checkMinimized(t, out, 0)

	// The regression test fails on the buggy server, and passes once it
	// is fixed.
	code, got := runDoc(t, cmds[1])
	if code != 1 || !strings.Contains(got, "rpcfuzz: crash") || !strings.Contains(got, "index out of range") {
		t.Fatalf("%q on the buggy server: exit %d\n%s", cmds[1], code, got)
	}
	fixed := strings.Replace(buggyServer, "%v", "false", 1)
	if err := os.WriteFile(filepath.Join("myserver", "server.go"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, got := runDoc(t, cmds[1]); code != 0 || !strings.Contains(got, "ok") {
		t.Fatalf("%q on the fixed server: exit %d\n%s", cmds[1], code, got)
	}
}

// longIDStream finds a choice stream that the module's FuzzRPC (Methods
// echo, a Func target) expands to one message of over 1000 bytes that
// crashes the buggy server: a JSON object whose id is a string over 100
// bytes, as go test -fuzz finds and saves them. It returns the stream and
// the size of its message.
func longIDStream(t *testing.T) ([]byte, int) {
	t.Helper()
	exp, err := native.New(native.Options{Methods: []string{"echo"}, Framing: mutate.FramingNone})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(16, 6))
	for range 100000 {
		data := make([]byte, 1+r.IntN(48))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		in := exp.Expand(data)
		if in.Literal || len(in.Case.Frames) != 1 || in.Case.Wire != nil || len(in.Case.Frames[0]) < 1000 {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(in.Case.Frames[0], &m) == nil && len(m["id"]) > 102 && m["id"][0] == '"' {
			return data, len(in.Case.Frames[0])
		}
	}
	t.Fatal("no choice stream of 100000 makes a message with a long string id")
	return nil, 0
}

// checkMinimized checks what rpcfuzz minimize said and wrote: one literal
// case, one regression test, and the case one message: an id of just over
// 100 bytes, and nothing else. It returns the case file.
func checkMinimized(t *testing.T, out string, before int) string {
	t.Helper()
	cases, _ := filepath.Glob(filepath.Join("myserver", "testdata", "rpcfuzz", "FuzzRPC-*.json"))
	tests, _ := filepath.Glob(filepath.Join("myserver", "rpcfuzz_fuzzrpc_*_test.go"))
	if len(cases) != 1 || len(tests) != 1 {
		t.Fatalf("wrote cases %q and tests %q; want one of each", cases, tests)
	}
	for _, p := range []string{cases[0], tests[0]} {
		if abs, _ := filepath.Abs(p); !strings.Contains(out, abs) {
			t.Errorf("the output does not name %s", abs)
		}
	}
	if before > 0 && !strings.Contains(out, "crash, 1 message in "+strconv.Itoa(before)+" bytes -> 1 message in ") {
		t.Errorf("the output does not give the rule and the sizes before and after")
	}
	cf, err := native.ReadCaseFile(cases[0])
	if err != nil {
		t.Fatal(err)
	}
	if cf.FuzzTest != "FuzzRPC" || cf.Rule != "crash" || len(cf.Messages) != 1 || cf.Wire != nil {
		t.Fatalf("case file: %+v; want one message of FuzzRPC failing with crash", cf)
	}
	var m map[string]json.RawMessage
	msg := cf.Messages[0]
	// 101 bytes between the id's quotes, the fewest that crash, or 102
	// when the id is made of two-byte escapes; and no other member.
	if err := json.Unmarshal(msg, &m); err != nil || len(m) != 1 || len(m["id"]) < 103 || len(m["id"]) > 104 || len(msg) != len(`{"id":}`)+len(m["id"]) {
		t.Fatalf("minimized message (%d bytes, from %d) %s; want an id of 101 bytes and nothing else", len(msg), before, msg)
	}
	return cases[0]
}

// TestMinimizeNativeUsage: a file is a native failure, which runs
// against its own fuzz test and nothing else.
func TestMinimizeNativeUsage(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "input")
	failure := filepath.Join(dir, "testdata", "fuzz", "FuzzRPC", "5d1e")
	if err := os.MkdirAll(filepath.Dir(failure), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{loose, failure} {
		if err := os.WriteFile(f, []byte("not a corpus file\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"minimize", loose}, "a native failure is PKG/testdata/fuzz/FuzzXxx/FILE"},
		{[]string{"minimize", failure}, "go corpus file"},
		{[]string{"minimize", failure, "--target", "http://127.0.0.1:1/"}, "--target does not apply to a native failure"},
		{[]string{"minimize", failure, "--", "srv"}, "no -- COMMAND"},
		{[]string{"minimize", failure, "--time", "-1s"}, "--time must not be negative"},
	}
	for _, tt := range tests {
		code, _, stderr := run(tt.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("rpcfuzz %q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
