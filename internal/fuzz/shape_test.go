package fuzz

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/jsontree"
)

func TestReplyShape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "none"},
		{"  \n", "none"},
		{`{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}`, `{id:num,jsonrpc:str,result:obj}`},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":"y"}}`, `{error:{code,data,message},id:null,jsonrpc:str}`},
		{`{"id":"7","result":true,"jsonrpc":"2.0"}`, `{id:str,jsonrpc:str,result:bool}`},
		{`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":2,"result":2}]`, `[{id:num,jsonrpc:str,result:num}]`},
		{`[1,"a",null,[]]`, `[arr,null,num,str]`},
		{`[1,"a",null,[],{}]`, `[arr,null,num,str,…]`}, // four distinct element shapes at most
		{`{"a":1,"a":"x"}`, `{a:num,a:str}`},
		{`{"a,b":1}`, `{a?b:num}`},
		{`not json`, "not_json"},
		{`{"a":1`, "not_json"},
		{`"str"`, "str"},
		{`[]`, `[]`},
	} {
		if got := replyShape([]byte(tc.in)); got != tc.want {
			t.Errorf("replyShape(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// The shape of a huge array looks at a bounded number of elements.
	big := "[" + strings.Repeat(`{"a":1},[2],`, 10_000) + "3]"
	if got := replyShape([]byte(big)); got != `[arr,{a:num},…]` {
		t.Errorf("shape of a big array: %s", got)
	}
}

// FuzzReplyShape: any reply gets a short shape; valid JSON never reads as
// not_json, and the shape does not depend on the values.
func FuzzReplyShape(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"result":[1,{"a":2}]}`, `[1,"a",[],{}]`, `{"error":{"code":1}}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		shape := replyShape(data)
		if len(shape) > maxShape+len("…") || shape == "" {
			t.Fatalf("shape %q of %q", shape, data)
		}
		if json.Valid(data) && len(bytes.TrimSpace(data)) > 0 && shape == "not_json" {
			t.Fatalf("valid JSON %q read as not_json", data)
		}
		root, ok := jsontree.Parse(data, strictTree)
		if !ok || !json.Valid(data) {
			return
		}
		// Replace every number by 0 and every string by "": same shape.
		jsontree.Walk(root, func(n *jsontree.Node, _ int) bool {
			switch {
			case isNumber(n):
				n.Raw = []byte("0")
			case n.Kind == jsontree.String:
				n.Raw = []byte(`""`)
			}
			return true
		})
		if other := replyShape(jsontree.Append(nil, root)); other != shape {
			t.Fatalf("%q: shape %q, with other values %q", data, shape, other)
		}
	})
}
