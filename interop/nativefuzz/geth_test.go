package nativefuzz

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/rpcload/rpcload/rpcfuzz"
)

// gethTestService is registered under "test": test_echo and test_add.
type gethTestService struct{}

// Echo returns its positional arguments (up to three) as an array;
// go-ethereum has no variadic methods, and trailing pointer arguments are
// optional.
func (gethTestService) Echo(a, b, c *json.RawMessage) []json.RawMessage {
	out := []json.RawMessage{}
	for _, p := range []*json.RawMessage{a, b, c} {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// Add returns a+b.
func (gethTestService) Add(a, b int) int { return a + b }

// gethEthService is registered under "eth": eth_blockNumber.
type gethEthService struct{}

// BlockNumber returns a fixed block number: a fuzz input must get the same
// answer every time it runs.
func (gethEthService) BlockNumber() hexutil.Uint64 { return 0x10 }

// newGethHandler returns a go-ethereum rpc.Server with the test and eth
// services. The server is its own http.Handler (JSON-RPC over HTTP POST),
// so rpcfuzz.Handler calls it directly, with no listener.
func newGethHandler(tb testing.TB) http.Handler {
	tb.Helper()
	srv := rpc.NewServer()
	if err := srv.RegisterName("test", gethTestService{}); err != nil {
		tb.Fatalf("register test: %v", err)
	}
	if err := srv.RegisterName("eth", gethEthService{}); err != nil {
		tb.Fatalf("register eth: %v", err)
	}
	tb.Cleanup(srv.Stop)
	return srv
}

// gethOptions are FuzzGeth's options: the methods with their params, the
// Ethereum seeds (eth_* calls and batches), and the deviations of
// go-ethereum v1.17.10 found by black-box fuzzing
// (../testdata/fuzz-baselines/geth-http.txt).
var gethOptions = rpcfuzz.Options{
	Methods: []string{"test_echo", "test_add", "eth_blockNumber"},
	Params: map[string]json.RawMessage{
		"test_echo": json.RawMessage(`{"type":"array","maxItems":3}`),
		"test_add":  json.RawMessage(`{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}`),
	},
	Profile: "eth",
	Timeout: fuzzTimeout,
	Ignore: []string{
		// JSON-RPC 2.0 §4 (an id MUST be a String, Number or Null) and §5
		// (the id of a request it cannot read is answered as null):
		// go-ethereum takes true or false as an id, runs the call and
		// echoes the boolean in its response, alone or in a batch. The
		// response breaks two rules: its id is of no type an id may have
		// (invalid_envelope), and a request with such an id is an Invalid
		// Request, due -32600 rather than a result (wrong_error_code,
		// JSON-RPC 2.0 §5.1).
		// (Inside a batch the response with the boolean id is paired with
		// the element that carries it, even where another element, a
		// notification read with its first params, could take it; and a
		// message with an error member and a method that is no string,
		// which go-ethereum drops as a response, may go unanswered: the
		// oracle allows both, see TestAcceptedAnswers.)
		"invalid_envelope",
		"wrong_error_code",
	},
}

// FuzzGeth fuzzes go-ethereum's JSON-RPC server with the eth profile.
func FuzzGeth(f *testing.F) {
	rpcfuzz.Fuzz(f, rpcfuzz.Handler(newGethHandler(f)), gethOptions)
}
