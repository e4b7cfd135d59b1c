package wire

import (
	"reflect"
	"testing"
)

// replyCases are frames at and just past the edge of the reply path's
// shape (scanner.reply): each must scan the same with it as without.
var replyCases = []string{
	`{"jsonrpc":"2.0","id":12345,"result":{"ok":true,"n":42}}`,
	`{"jsonrpc":"2.0","id":0,"result":0}`,
	`{"jsonrpc":"2.0","id":-7,"result":"x"}` + " \r\n\t",
	`{"jsonrpc":"2.0","id":"12","result":null}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"result\":[\"\xc0\"]}",
	`{"jsonrpc":"2.0","id":"a\"b","result":[]}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":2,"x":1,"x":2}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a","code":2}}`,
	`{"jsonrpc":"2.0","id":1,"error":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":` + nest(DefaultMaxDepth-1, "[", "]", "") + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + nest(DefaultMaxDepth, "[", "]", "") + `}`,
	`{"jsonrpc":"2.0","id":1.5,"result":1}`,
	`{"jsonrpc":"2.0","id":1e3,"result":1}`,
	`{"jsonrpc":"2.0","id":01,"result":1}`,
	`{"jsonrpc":"2.0","id":-,"result":1}`,
	`{"jsonrpc":"2.0","id":null,"result":1}`,
	`{"jsonrpc":"2.0","id":true,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"id":2}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"error":null}`,
	`{"jsonrpc":"2.0","id":1,"result":1 }`,
	`{"jsonrpc":"2.0","id":1,"result":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":1}x`,
	`{"jsonrpc":"2.0","id":1,"result":}`,
	`{"jsonrpc":"2.0","id":1,"result":`,
	`{"jsonrpc":"2.0","id":1,"error":null}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"params":[],"result":1}`,
	`{"jsonrpc":"2.0","id":1, "result":1}`,
	`{"jsonrpc":"2.0","id":"1,"result":1}`,
	` {"jsonrpc":"2.0","id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"resul\u0074":1}`,
	`{"jsonrpc":"2.0","id":`,
	`{"jsonrpc":"2.0","id": 1,"result":1}`,
	`{"jsonrpc":"2.0","id":1 ,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result": 1}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"result":2}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"jsonrpc":"1.0"}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"x":1,"x":2}`,
	`{"jsonrpc":"2.0","id":{"a":1},"result":1}`,
	`{"jsonrpc":"2.0","id":1,"id":2}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":1,}`,
	`[{"jsonrpc":"2.0","id":1,"result":1}]`,
}

func TestScanReplyAgrees(t *testing.T) {
	for _, frame := range replyCases {
		name := frame
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) { checkSameScan(t, []byte(frame)) })
	}
}

// checkSameScan fails unless Scan gives for frame exactly what the general
// path alone gives: the same fields, each byte slice the same part of the
// frame.
func checkSameScan(t *testing.T, frame []byte) {
	t.Helper()
	var got, want Message
	Scan(frame, &got)
	scan(frame, &want, false)
	slices := [][2][]byte{{got.ID, want.ID}, {got.Method, want.Method}, {got.Params, want.Params},
		{got.Result, want.Result}, {got.Error, want.Error}, {got.ErrMsg, want.ErrMsg}, {got.ErrData, want.ErrData}}
	for k, p := range slices {
		if !sameSlice(p[0], p[1]) {
			t.Fatalf("field %d of %q: Scan %q, general path %q", k, frame, p[0], p[1])
		}
	}
	got.ID, got.Method, got.Params, got.Result, got.Error, got.ErrMsg, got.ErrData = nil, nil, nil, nil, nil, nil, nil
	want.ID, want.Method, want.Params, want.Result, want.Error, want.ErrMsg, want.ErrData = nil, nil, nil, nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Scan(%q) = %+v, general path %+v", frame, got, want)
	}
}

// sameSlice reports whether a and b are the same bytes of one frame (or
// both nil).
func sameSlice(a, b []byte) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// FuzzScanReply holds Scan's reply path to the general path: on every
// input the two give the same message, so no verdict depends on which
// path scanned a frame.
func FuzzScanReply(f *testing.F) {
	for _, frame := range replyCases {
		f.Add([]byte(frame))
	}
	for _, tc := range scanCases {
		f.Add([]byte(tc.frame))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameScan(t, data)
	})
}
