package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// childEnv makes the test binary a child-process target: "bugs=LIST" serves
// fuzztarget with those planted bugs on stdin and stdout (a planted crash
// exits with status 2 and a panic line on stderr, like a Go server), "die"
// exits with status 3 at the first line it reads, "parsedie" serves
// fuzztarget without bugs and ends its session (exit status 1) after
// answering a line that is not JSON, as some language servers do,
// "shuffle=DURATION" serves
// the reference server answering in any order (testsrv.Config.Shuffle).
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
	if mode == "parsedie" {
		return parseDieChild()
	}
	if d, ok := strings.CutPrefix(mode, "shuffle="); ok {
		return shuffledChild(d)
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

// shuffledChild serves the reference server on stdin and stdout, each
// reply held for a random time below d.
func shuffledChild(d string) int {
	shuffle, err := time.ParseDuration(d)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := testsrv.New(testsrv.Config{Shuffle: shuffle})
	if err == nil {
		err = srv.ServeStdio(os.Stdin, os.Stdout, testsrv.FramingNewline)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// parseDieChild answers each line as fuzztarget does and exits with
// status 1 after the -32700 of a line that is not JSON.
func parseDieChild() int {
	srv := fuzztarget.New(0)
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if reply := srv.Handle(context.Background(), bytes.TrimSpace(line)); reply != nil {
				out.Write(append(reply, '\n'))
			}
			if !json.Valid(line) {
				out.Flush()
				fmt.Fprintln(os.Stderr, "fatal: cannot parse the message, closing the session")
				return 1
			}
		}
		if in.Buffered() == 0 {
			out.Flush()
		}
		if err != nil {
			out.Flush()
			return 0
		}
	}
}
