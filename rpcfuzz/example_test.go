package rpcfuzz_test

import (
	"fmt"
	"testing"

	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/rpcfuzz"
)

// FuzzExample fuzzes a correct server (fuzztarget with no bug planted,
// served as an http.Handler): under -fuzz it must find nothing, and plain
// go test replays the seeds.
func FuzzExample(f *testing.F) {
	rpcfuzz.Fuzz(f, rpcfuzz.Handler(fuzztarget.New(0).HTTPHandler()), rpcfuzz.Options{
		Methods: []string{"echo", "add"},
	})
}

// Known deviations of a server are ignored as narrowly as they can be
// told apart: a rule alone ignores all its findings, a rule with a
// pattern only those whose note, message or reply the pattern matches.
func ExampleIgnoreMatching() {
	opts := rpcfuzz.Options{
		Methods: []string{"echo", "add"},
		Ignore: []string{
			// JSON-RPC 2.0 §5.1 (-32600 for JSON that is no Request
			// object): the server answers such JSON with -32700.
			rpcfuzz.IgnoreMatching("wrong_error_code", `answered with error -32700; want error -32600`),
			// JSON-RPC 2.0 §4 (an id is a String, Number or Null): the
			// server echoes a boolean id; the same entry, written out.
			`invalid_envelope "\"id\":(true|false)[,}]"`,
			// slow_input is a warning anyway; a rule alone ignores all of
			// its findings.
			"slow_input",
		},
	}
	for _, e := range opts.Ignore {
		fmt.Println(e)
	}
	// Output:
	// wrong_error_code "answered with error -32700; want error -32600"
	// invalid_envelope "\"id\":(true|false)[,}]"
	// slow_input
}

// TestExampleRegression is a regression test as rpcfuzz minimize writes
// one beside a fuzz test: it replays the literal case in testdata/rpcfuzz
// through FuzzExample, which sends it to its own target with its own
// Options.
func TestExampleRegression(t *testing.T) {
	rpcfuzz.Replay(t, "FuzzExample", "testdata/rpcfuzz/FuzzExample-example.json")
}

// rpcfuzz minimize writes the smallest literal case of a native failure
// into testdata/rpcfuzz and a test replaying it through the fuzz test.
func ExampleReplay() {
	regression := func(t *testing.T) {
		rpcfuzz.Replay(t, "FuzzRPC", "testdata/rpcfuzz/FuzzRPC-3f2a9c0d1e7b5a44.json")
	}
	_ = regression
}
