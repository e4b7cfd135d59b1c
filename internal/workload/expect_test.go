package workload

import (
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

// TestExpectExactNumbers: expectations compare numbers by their exact
// value, as --diff does: integers beyond 2^53, which float64 rounds to
// their neighbours, are told apart, and spellings of one value are not.
func TestExpectExactNumbers(t *testing.T) {
	reply := func(result string) *wire.Message {
		var m wire.Message
		wire.Scan([]byte(`{"jsonrpc":"2.0","id":1,"result":`+result+`}`), &m)
		return &m
	}
	for _, tc := range []struct {
		name   string
		expect Expect
		params string // sent, for the echo
		result string
		fails  bool
	}{
		{"echo exact beyond 2^53", Expect{ResultEqualsParams: true}, `[9007199254740993]`, `[9007199254740993]`, false},
		{"echo rounded to float64", Expect{ResultEqualsParams: true}, `[9007199254740993]`, `[9007199254740992]`, true},
		{"echo respelled", Expect{ResultEqualsParams: true}, `{"a":[1,2.50],"b":"x"}`, `{"b":"x","a":[1.0,25e-1]}`, false},
		{"echo of 0.1 vs its float64 neighbour", Expect{ResultEqualsParams: true}, `[0.1]`, `[0.10000000000000001]`, true},
		{"equals exact beyond 2^53", Expect{ResultEquals: []byte(`18446744073709551617`)}, ``, `18446744073709551617`, false},
		{"equals rounded", Expect{ResultEquals: []byte(`18446744073709551617`)}, ``, `18446744073709551616`, true},
		{"equals respelled", Expect{ResultEquals: []byte(`{"n":100}`)}, ``, `{"n":1e2}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fp uint64
			if tc.params != "" {
				fp = Fingerprint([]byte(tc.params))
			}
			why := tc.expect.Check(reply(tc.result), fp)
			if (why != "") != tc.fails {
				t.Errorf("Check = %q, want failure %v", why, tc.fails)
			}
		})
	}
}
