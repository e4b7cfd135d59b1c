package wire

import (
	"strings"
	"testing"
)

func benchScan(b *testing.B, frame string, kind Kind) {
	f := []byte(frame)
	var m Message
	Scan(f, &m)
	if m.Kind != kind || m.Problems != 0 {
		b.Fatalf("bad benchmark frame: %v %q", m.Kind, m.Problems)
	}
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		Scan(f, &m)
	}
}

func BenchmarkScanResult(b *testing.B) {
	benchScan(b, `{"jsonrpc":"2.0","id":12345,"result":{"ok":true,"n":42}}`, KindResult)
}

func BenchmarkScanError(b *testing.B) {
	benchScan(b, `{"jsonrpc":"2.0","id":12345,"error":{"code":-32601,"message":"Method not found"}}`, KindError)
}

func BenchmarkScanRequest(b *testing.B) {
	benchScan(b, `{"jsonrpc":"2.0","id":"12345","method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}`, KindRequest)
}

func BenchmarkScanLargeResult(b *testing.B) {
	item := `{"hash":"0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b","n":12345,"ok":true,"tags":["a","b"]},`
	benchScan(b, `{"jsonrpc":"2.0","id":1,"result":[`+strings.Repeat(item, 100)+`null]}`, KindResult)
}

func BenchmarkAppendRequest(b *testing.B) {
	method := AppendString(nil, "eth_getBalance")
	params := []byte(`["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for n := uint64(0); b.Loop(); n++ {
		buf = AppendRequest(buf[:0], n, IDInt, method, params)
	}
}
