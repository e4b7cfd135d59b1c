package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// argvChildEnv, when set, makes the test binary a JSON-RPC child process
// that first writes its arguments as JSON to the file the variable names.
const argvChildEnv = "RPCLOAD_TEST_ARGV_FILE"

// argvChild is the test binary's life as a child: its argv to path, then
// the reference server on stdin and stdout until EOF.
func argvChild(path string) int {
	b, err := json.Marshal(os.Args[1:])
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := srv.ServeStdio(os.Stdin, os.Stdout, testsrv.FramingNewline); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestChildArgvVerbatim: a child process is started without a shell, its
// arguments passed as a list: arguments full of shell metacharacters (and
// an empty one) arrive exactly as given, from the command line after --
// and from a scenario file's command list, and nothing they would do in a
// shell happens.
func TestChildArgvVerbatim(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	args := []string{
		"a b", "", "; touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`",
		"| cat", "&& exit 3", "> " + marker, "*", "~", "$HOME", "'quoted'", `"dq"`, "back\\slash", "new\nline", "tab\there", "--flag=x",
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "child.yaml")
	cmdJSON, _ := json.Marshal(append([]string{self}, args...))
	if err := os.WriteFile(scenario, []byte("version: 1\ncommand: "+string(cmdJSON)+"\nmix: [{method: echo, params: [1]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"after --", append([]string{"run", "--method", "echo", "--params", "[1]", "--"}, append([]string{self}, args...)...)},
		{"scenario command", []string{"run", "-f", scenario}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argvFile := filepath.Join(t.TempDir(), "argv.json")
			t.Setenv(argvChildEnv, argvFile)
			common := []string{"--rate", "50", "--duration", "100ms", "--timeout", "2s", "-q"}
			var c child
			if i := slices.Index(tc.argv, "--"); i >= 0 {
				c = runBinary(t, childLimit, slices.Concat(tc.argv[:i], common, tc.argv[i:])...)
			} else {
				c = runBinary(t, childLimit, append(tc.argv, common...)...)
			}
			if c.code != exitOK {
				t.Fatalf("run with a child: %v", c)
			}
			b, err := os.ReadFile(argvFile)
			if err != nil {
				t.Fatalf("the child did not record its argv: %v\n%v", err, c)
			}
			var got []string
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, args) {
				t.Errorf("the child got\n%q\nwant\n%q", got, args)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("a shell ran: %s exists", marker)
			}
			if !strings.Contains(c.stdout, "requests") {
				t.Errorf("no report:\n%s", c.stdout)
			}
		})
	}
}
