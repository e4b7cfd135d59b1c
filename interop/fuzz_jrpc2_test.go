package interop

// TestFuzzJRPC2 and the jrpc2 server it fuzzes on stdio, a main built from
// source during the test run (fuzzTarget and the baselines: fuzz_test.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// jrpc2StdioMain is the source of the jrpc2 server the fuzz test runs as a
// child process: the methods of jrpc2_test.go served by jrpc2.NewServer with
// default options (as server.Loop serves each TCP connection there) on stdin
// and stdout with channel.Line, the newline framing of TestJRPC2's tcp://
// target.
//
// Not in-process as in TestJRPC2: fuzzing finds a nil-pointer panic in
// jrpc2 v1.3.6 (Server.deliver on a stopped server, see
// testdata/fuzz-baselines/jrpc2-stdio.txt) that kills its process, which
// must be a child the fuzzer restarts, not the test binary.
const jrpc2StdioMain = `// Command jrpc2stdio serves echo and add with creachadair/jrpc2 on stdin and stdout.
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"
)

func main() {
	methods := handler.Map{
		"echo": handler.New(func(_ context.Context, req *jrpc2.Request) (json.RawMessage, error) {
			return json.RawMessage(req.ParamString()), nil
		}),
		"add": handler.New(func(_ context.Context, p [2]int) int { return p[0] + p[1] }),
	}
	if err := jrpc2.NewServer(methods, nil).Start(channel.Line(os.Stdin, os.Stdout)).Wait(); err != nil {
		log.Fatal(err)
	}
}
`

// The jrpc2 stdio server binary, built once per test run by jrpc2Stdio.
var (
	jrpc2StdioOnce sync.Once
	jrpc2StdioPath string
	jrpc2StdioErr  error
)

// jrpc2Stdio builds jrpc2StdioMain in this module (so with the jrpc2
// version of go.mod) without writing to the source tree: an -overlay file
// places the source in a package directory that does not exist on disk.
// The binary goes next to rpcload, or into t.TempDir() when rpcload did not
// build.
func jrpc2Stdio(t *testing.T) string {
	t.Helper()
	build := func(dir string) (string, error) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		src := filepath.Join(dir, "jrpc2stdio.go")
		if err := os.WriteFile(src, []byte(jrpc2StdioMain), 0o644); err != nil {
			return "", err
		}
		overlay, err := json.Marshal(map[string]map[string]string{
			"Replace": {filepath.Join(wd, "_fuzzjrpc2stdio", "main.go"): src},
		})
		if err != nil {
			return "", err
		}
		ov := filepath.Join(dir, "jrpc2stdio-overlay.json")
		if err := os.WriteFile(ov, overlay, 0o644); err != nil {
			return "", err
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, "jrpc2stdio")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool, "build", "-overlay", ov, "-o", bin, "./_fuzzjrpc2stdio")
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("interop: go build the jrpc2 stdio server: %w\n%s", err, msg)
		}
		return bin, nil
	}
	if rpcloadPath == "" {
		p, err := build(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	jrpc2StdioOnce.Do(func() {
		jrpc2StdioPath, jrpc2StdioErr = build(filepath.Dir(rpcloadPath))
	})
	if jrpc2StdioErr != nil {
		t.Fatal(jrpc2StdioErr)
	}
	return jrpc2StdioPath
}

// TestFuzzJRPC2 fuzzes creachadair/jrpc2 (the methods of TestJRPC2) on
// stdio with newline framing.
func TestFuzzJRPC2(t *testing.T) {
	t.Parallel()
	fuzzTarget{name: "jrpc2-stdio", child: []string{jrpc2Stdio(t)}, minExecs: 50,
		args: []string{"--max-restarts", "50"}}.run(t)
}
