package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/native"
	"github.com/rpcload/rpcload/rpcfuzz"
)

// buggyServer is the server of the module nativeModule writes: correct
// JSON-RPC for what the test sends, and, when bug is set, a crash on a
// string id over 100 bytes (a fixed-size buffer indexed by the id's
// length).
const buggyServer = `package buggy

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

const buggyFuzzTest = `package buggy

import (
	"testing"

	"github.com/rpcload/rpcload/rpcfuzz"
)

func FuzzRPC(f *testing.F) {
	rpcfuzz.Fuzz(f, rpcfuzz.Func(Handle), rpcfuzz.Options{Methods: []string{"echo"}})
}
`

// nativeModule writes a Go module, outside this one, whose package
// fuzzes a server with rpcfuzz, built against this checkout (a replace
// directive) from the module cache alone (GOFLAGS=-mod=mod, GOPROXY=off),
// as docs/fuzzing-native.md shows.
func nativeModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example.com/buggy\n\ngo 1.26\n\nrequire github.com/rpcload/rpcload v0.0.0\n\nreplace github.com/rpcload/rpcload => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":         goMod,
		"go.sum":         string(sum),
		"server.go":      strings.Replace(buggyServer, "%v", "true", 1),
		"server_test.go": buggyFuzzTest,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	return dir
}

// TestMinimizeNative minimizes a native failure end to end: a package
// whose server crashes on a string id over 100 bytes, and a failure
// holding that id in a 4 KiB message after another. The literal case must
// come out as one message with the id and little else, and the regression
// test written beside it must fail on the buggy server and pass on the
// fixed one.
func TestMinimizeNative(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module's test binary")
	}
	dir := nativeModule(t)
	id := strings.Repeat("x", 101)
	first := `{"jsonrpc":"2.0","id":1,"method":"echo","params":["hello"]}`
	buggy := `{"jsonrpc":"2.0","id":"` + id + `","method":"echo","params":{"pad":"` + strings.Repeat("p", 4000) + `","more":[1,2,3]}}`
	failure := filepath.Join(dir, "testdata", "fuzz", "FuzzRPC", "5d1e0a12b3c4d5e6")
	if err := os.MkdirAll(filepath.Dir(failure), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(failure, fuzzcase.MarshalGoCorpus(rpcfuzz.Literal([]byte(first), []byte(buggy))), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := run("minimize", failure, "--budget", "400")
	if code != 0 {
		t.Fatalf("minimize: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	t.Log(out)
	cases, _ := filepath.Glob(filepath.Join(dir, "testdata", "rpcfuzz", "FuzzRPC-*.json"))
	tests, _ := filepath.Glob(filepath.Join(dir, "rpcfuzz_fuzzrpc_*_test.go"))
	if len(cases) != 1 || len(tests) != 1 {
		t.Fatalf("wrote cases %q and tests %q; want one of each", cases, tests)
	}
	for _, p := range []string{cases[0], tests[0]} {
		if !strings.Contains(out, p) {
			t.Errorf("the output does not name %s", p)
		}
	}
	if !strings.Contains(out, "crash, 2 messages in "+strconv.Itoa(len(first)+len(buggy))+" bytes -> 1 message in ") {
		t.Errorf("the output does not give the rule and the sizes before and after")
	}
	cf, err := native.ReadCaseFile(cases[0])
	if err != nil {
		t.Fatal(err)
	}
	if cf.FuzzTest != "FuzzRPC" || cf.Rule != "crash" || len(cf.Messages) != 1 || cf.Wire != nil {
		t.Fatalf("case file: %+v; want one message of FuzzRPC failing with crash", cf)
	}
	msg := string(cf.Messages[0])
	if !strings.Contains(msg, `"`+id+`"`) || len(msg) > len(id)+16 {
		t.Fatalf("minimized message (%d bytes) %s; want the 101-byte id and little else", len(msg), msg)
	}

	// The regression test fails on the buggy server, and passes once it
	// is fixed.
	name := regressionName(t, tests[0])
	got, err := goTest(dir, name)
	if err == nil || !strings.Contains(got, "rpcfuzz: crash") || !strings.Contains(got, "index out of range") {
		t.Fatalf("the regression test on the buggy server: %v\n%s", err, got)
	}
	fixed := strings.Replace(buggyServer, "%v", "false", 1)
	if err := os.WriteFile(filepath.Join(dir, "server.go"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := goTest(dir, name); err != nil {
		t.Fatalf("the regression test on the fixed server: %v\n%s", err, got)
	}
}

// regressionName reads the test function's name from the file minimize
// wrote.
func regressionName(t *testing.T, file string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "\nfunc ")
	name, _, _ := strings.Cut(rest, "(")
	if !ok || !strings.HasPrefix(name, "TestFuzzRPC_") {
		t.Fatalf("no TestFuzzRPC_ function in %s:\n%s", file, src)
	}
	return name
}

func goTest(dir, name string) (string, error) {
	cmd := exec.Command("go", "test", "-count=1", "-run", "^"+name+"$", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
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
