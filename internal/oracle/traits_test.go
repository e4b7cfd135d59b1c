package oracle

import (
	"strings"
	"testing"
)

func TestInputTraits(t *testing.T) {
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	batch := "[" + strings.Repeat(`{"jsonrpc":"2.0","method":"n"},`, 101) + `{"jsonrpc":"2.0","method":"n"}]`
	for _, tc := range []struct {
		name, frame     string
		parser, message string
	}{
		{"plain call", `{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`, "", ""},
		{"deep params", `{"jsonrpc":"2.0","id":1,"method":"echo","params":` + deep + `}`, "deep", ""},
		{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"echo","params":["\ud800"]}`, "lone_surrogate", ""},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ec\xffho\"}", "bad_utf8", ""},
		{"invalid UTF-8 in text that is not JSON", "{\"method\":\"\xff", "bad_utf8", ""},
		{"lone surrogate in text that is not JSON", `{"method":"\ud800`, "lone_surrogate", ""},
		{"repeated key", `{"jsonrpc":"2.0","id":1,"method":"echo","method":"add"}`, "dup_key", ""},
		{"repeated id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"echo"}`, "dup_key", "dup_id"},
		{"20-digit id", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"echo"}`, "odd_id", ""},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"echo"}`, "odd_id", ""},
		{"-0 is an integer", `{"jsonrpc":"2.0","id":-0,"method":""}`, "", "empty_method"},
		{"number beyond float64", `{"jsonrpc":"2.0","id":1,"method":"echo","params":[1e400]}`, "huge_number", ""},
		{"big batch", batch, "big_batch", ""},
		{"several, most telling first", `{"jsonrpc":"2.0","id":1.5,"method":"x","params":[` + deep + `,"\udc00"],"x":1}`, "lone_surrogate+odd_id+deep", "extra_member"},
		{"message traits", `{"jsonrpc":"2.0","id":1,"method":"","params":null,"extra":0}`, "", "extra_member+null_params+empty_method"},
		{"response sent to the server", `{"jsonrpc":"2.0","id":1,"result":0}`, "", "response_like"},
		{"not JSON", `{"jsonrpc":`, "", ""},
		{"unbalanced", `]]]}}"`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, m := InputTraits([]byte(tc.frame))
			if p != tc.parser || m != tc.message {
				t.Errorf("InputTraits = %q, %q; want %q, %q", p, m, tc.parser, tc.message)
			}
		})
	}
}
