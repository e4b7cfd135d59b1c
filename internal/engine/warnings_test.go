package engine

import (
	"reflect"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/workload"
)

// TestErrorReplyWarnings: a call every reply of which was an error is
// named with the commonest code and its message; calls with a result
// among their replies, or no reply at all, are not.
func TestErrorReplyWarnings(t *testing.T) {
	method := func(answered, rpcErrors uint64, codes map[string]uint64) stats.MethodResult {
		return stats.MethodResult{Requests: stats.Requests{Answered: answered, RPCErrors: rpcErrors}, ErrorCodes: codes}
	}
	res := &stats.Result{
		Methods: map[string]stats.MethodResult{
			"echoo":   method(10, 10, map[string]uint64{"-32601": 10}),
			"mixed":   method(10, 9, map[string]uint64{"-32602": 9}),
			"several": method(10, 10, map[string]uint64{"-32602": 3, "-32000": 7}),
			"silent":  method(0, 0, nil),
		},
		ErrorMessages: map[string][]string{"-32601": {"Method not found"}, "-32000": {"server error"}},
	}
	calls := []workload.Call{{Name: "echoo", Method: "echoo"}, {Name: "mixed", Method: "add"}, {Name: "several", Method: "sum"}, {Name: "silent", Method: "x"}}
	want := []string{
		`every reply to echoo was an error: -32601 "Method not found" (10 of 10 replies): check the method name and params; --max-error-rate fails such a run`,
		`every reply to several (method sum) was an error, most often -32000 "server error" (7 of 10 replies; 2 codes in all): check the method name and params; --max-error-rate fails such a run`,
	}
	if got := errorReplyWarnings(res, calls); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
