package fuzz

import (
	"bufio"
	"context"
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
// exits with status 3 at the first line it reads, "shuffle=DURATION" serves
// the reference server answering in any order (testsrv.Config.Shuffle),
// "http=ADDR/LIST" serves fuzztarget with those bugs over HTTP on ADDR,
// a process that a planted crash ends (fuzztarget's ExitOnCrash).
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
	if d, ok := strings.CutPrefix(mode, "shuffle="); ok {
		return shuffledChild(d)
	}
	if spec, ok := strings.CutPrefix(mode, "http="); ok {
		return httpServer(spec)
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

// httpServer serves fuzztarget over HTTP on ADDR of "ADDR/BUGS" until a
// planted crash ends the process (status 2, the panic on stderr).
func httpServer(spec string) int {
	addr, list, _ := strings.Cut(spec, "/")
	bugs, err := fuzztarget.ParseBugs(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := fuzztarget.New(bugs).ExitOnCrash().Listen(context.Background(), fuzztarget.Addrs{HTTP: addr}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening on", l.HTTP)
	l.Wait()
	return 0
}
