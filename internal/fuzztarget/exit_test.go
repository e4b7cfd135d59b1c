package fuzztarget

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serverEnv makes the test binary an HTTP server of its own on 127.0.0.1
// with the planted bugs it names and ExitOnCrash; it prints its address.
const serverEnv = "FUZZTARGET_TEST_SERVER"

func TestMain(m *testing.M) {
	if list := os.Getenv(serverEnv); list != "" {
		os.Exit(serveProcess(list))
	}
	os.Exit(m.Run())
}

func serveProcess(list string) int {
	bugs, err := ParseBugs(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := New(bugs).ExitOnCrash().Listen(context.Background(), Addrs{HTTP: "127.0.0.1:0"}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(l.HTTP)
	l.Wait()
	return 0
}

// TestExitOnCrash: a server made with ExitOnCrash dies of a planted crash
// over HTTP (status 2, the panic on stderr) and answers other input.
func TestExitOnCrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+NullBatch.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address: %v (stderr %q)", err, stderr.String())
	}
	url := "http://" + strings.TrimSpace(addr)
	if _, body, err := post(ctx, url, req("1", `"echo"`, "")); err != nil || body != ok("1", "null") {
		t.Fatalf("before the crash: %q, %v", body, err)
	}
	if resp, _, err := post(ctx, url, "[null]"); err == nil {
		t.Fatalf("got a response (%d) from a crashed server", resp.StatusCode)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("server ended with %v, want exit status 2", err)
	}
	if !strings.Contains(stderr.String(), "panic: fuzztarget: planted bug null_batch") {
		t.Errorf("stderr %q does not show the panic", stderr.String())
	}
	if _, err := http.Post(url, "application/json", strings.NewReader("{}")); err == nil {
		t.Error("the server still answers after its crash")
	}
}
