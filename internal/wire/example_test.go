package wire_test

import (
	"fmt"

	"github.com/rpcload/rpcload/internal/wire"
)

func ExampleScan() {
	var m wire.Message
	wire.Scan([]byte(`{"jsonrpc":"2.0","id":"7","result":{"ok":true},"ID":8}`), &m)
	n, f, ok := wire.ParseCounterID(m.ID)
	fmt.Println(m.Kind, m.Problems, string(m.Result), n, f == wire.IDQuoted, ok)
	// Output: result extra_member {"ok":true} 7 true true
}

func ExampleNextElement() {
	frame := []byte(`[{"jsonrpc":"2.0","id":1,"result":1}, 2]`)
	var m wire.Message
	for off := 0; ; {
		elem, next, ok := wire.NextElement(frame, off)
		if !ok {
			break
		}
		wire.Scan(elem, &m)
		fmt.Printf("%v %q\n", m.Kind, m.Problems)
		off = next
	}
	// Output:
	// result ""
	// invalid "not_object"
}

func ExampleAppendRequest() {
	method := wire.AppendString(nil, "eth_blockNumber")
	buf := wire.AppendRequest(make([]byte, 0, 128), 42, wire.IDInt, method, []byte(`[]`))
	fmt.Println(string(buf))
	// Output: {"jsonrpc":"2.0","id":42,"method":"eth_blockNumber","params":[]}
}
