package apispec

import "testing"

// TestPromptArgumentsAreStrings: MCP's GetPromptRequestParams makes every
// value of arguments a string (additionalProperties {"type": "string"}),
// listed by the prompt or not. A prompt's schema said nothing of the
// arguments it does not list, so {"city": "", "a/b~0": 0} was judged valid
// and server-everything's -32603 for it (a number where MCP wants a
// string) read as internal_error, "params its schema accepts", instead of
// a refusal of invalid params.
func TestPromptArgumentsAreStrings(t *testing.T) {
	api, err := FromMCP([]byte(`{"tools": []}`), []byte(`{"prompts": [{"name": "args-prompt", "arguments": [{"name": "city", "required": true}]}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := find(t, api, "prompt args-prompt")
	for _, tc := range []struct {
		args string
		want Verdict
	}{
		{`{"city":""}`, Valid},
		{`{"city":"","state":"x"}`, Valid},
		{`{"city":"","a/b~0":0}`, Invalid},
		{`{"city":"","🔑":{}}`, Invalid},
		{`{"city":0}`, Invalid},
	} {
		if got, why := p.CheckParams([]byte(tc.args)); got != tc.want {
			t.Errorf("%s: verdict %d (%s), want %d", tc.args, got, why, tc.want)
		}
	}
}
