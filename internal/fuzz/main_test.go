package fuzz

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/fuzztarget"
)

// childEnv makes the test binary a child-process target: "bugs=LIST" serves
// fuzztarget with those planted bugs on stdin and stdout (a planted crash
// exits with status 2 and a panic line on stderr, like a Go server), "die"
// exits with status 3 at the first line it reads.
const childEnv = "RPCFUZZ_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	if mode == "die" {
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return 0
		}
		fmt.Fprintln(os.Stderr, "fatal error: this server dies at every input")
		return 3
	}
	list, ok := strings.CutPrefix(mode, "bugs=")
	if !ok {
		fmt.Fprintf(os.Stderr, "bad %s %q\n", childEnv, mode)
		return 1
	}
	bugs, err := fuzztarget.ParseBugs(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = fuzztarget.New(bugs).ServeStream(context.Background(), os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "panic: %v\n\ngoroutine 1 [running]:\nmain.serve()\n", err)
		return 2
	}
	return 0
}
