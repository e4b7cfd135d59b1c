package rpcfuzz_test

import (
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
