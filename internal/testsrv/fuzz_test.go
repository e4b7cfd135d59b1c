package testsrv

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

// fuzzSeeds are the corner cases of protocols.md §5 on top of every table case.
var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1e400,"method":"echo"}`,
	`{"jsonrpc":"2.0","id":-0,"method":"echo","params":[-0]}`,
	`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"add","params":[1e308,1]}`,
	`{"jsonrpc":"2.0","id":"\ud800","method":"echo","params":["\ud800"]}`,
	"\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"method":"echo"}`,
	`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"echo"}`,
	`{"jsonrpc":"2.0","id":"a\u0000b","method":"get_time"}`,
	`[[[]],{},null,true,"x"]`,
	`{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":1,"b":2,"a":3}}`,
	`{"jsonrpc":"2.0","id":1,"method":"lookup_weather","params":{"c\u0069ty":"x"}}`,
	`{"jsonrpc":"2.0","id":"7","method":"convert","params":[9223372036854775807,-1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"convert","params":[-9223372036854775808,-1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"spin","params":{"us":1e-300}}`,
}

// FuzzHandleFrame: no input panics; every reply is valid JSON that wire.Scan
// classifies as a clean response (or a batch of them); a valid request's
// reply carries its id byte for byte, and a valid notification gets nothing.
func FuzzHandleFrame(f *testing.F) {
	for _, tc := range allCases() {
		f.Add([]byte(tc.in))
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	s, err := New(Config{Now: fixedClock})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, reply := s.HandleFrame(nil, in)
		var rq wire.Message
		wire.Scan(in, &rq)
		valid := rq.Problems&^(wire.ProblemExtraMember|wire.ProblemFractionalID) == 0
		if !reply {
			if len(out) != 0 {
				t.Fatalf("reply=false with output %q", out)
			}
			if rq.Kind != wire.KindNotification && rq.Kind != wire.KindBatch {
				t.Fatalf("no reply to %q", in)
			}
			return
		}
		if rq.Kind == wire.KindNotification && valid {
			t.Fatalf("replied %s to a valid notification %q", out, in)
		}
		if !json.Valid(out) {
			t.Fatalf("reply is not JSON: %q (input %q)", out, in)
		}
		var m wire.Message
		wire.Scan(out, &m)
		if m.Kind == wire.KindBatch {
			n := 0
			for off := 0; ; n++ {
				elem, next, ok := wire.NextElement(out, off)
				if !ok {
					break
				}
				off = next
				var em wire.Message
				wire.Scan(elem, &em)
				checkResponse(t, &em, elem, in)
			}
			if n == 0 || n != m.BatchLen {
				t.Fatalf("batch reply with %d elements (BatchLen %d): %s", n, m.BatchLen, out)
			}
			return
		}
		checkResponse(t, &m, out, in)
		if rq.Kind == wire.KindRequest && valid && (rq.IDKind == wire.IDNumber || rq.IDKind == wire.IDString || rq.IDKind == wire.IDNull) {
			if !bytes.Equal(m.ID, rq.ID) {
				t.Fatalf("id %s answered with id %s", rq.ID, m.ID)
			}
		}
	})
}

func checkResponse(t *testing.T, m *wire.Message, out, in []byte) {
	t.Helper()
	if (m.Kind != wire.KindResult && m.Kind != wire.KindError) || m.Problems&^wire.ProblemFractionalID != 0 {
		t.Fatalf("reply %s is %s with problems %q (input %q)", out, m.Kind, m.Problems, in)
	}
	if m.Kind == wire.KindError && (m.Code >= 0 || !m.HasCode) {
		t.Fatalf("error reply with code %d: %s", m.Code, out)
	}
}
