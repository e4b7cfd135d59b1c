package fuzztarget

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAnswer checks the tokenizer against encoding/json and the planted
// bugs against the correct server:
//   - without bugs nothing panics or hangs, and every reply is valid JSON;
//   - the reply is -32700 exactly when encoding/json rejects the frame or
//     it is not UTF-8;
//   - no reply only for an object or an array (notifications);
//   - with bugs planted, a frame either crashes naming a planted bug, hangs
//     with hang planted, or gets the correct server's reply byte for byte.
func FuzzAnswer(f *testing.F) {
	for _, b := range append(Bugs(), HandlerBugs()...) {
		f.Add(TriggerFrame(b))
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a",{"b":null}]}`,
		`{"jsonrpc":"2.0","id":"x","method":"add","params":{"a":1,"b":2.5}}`,
		`[{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","id":-0,"method":""},1,[]]`,
		`{"jsonrpc":"2.0","id":1e400,"method":"\u0065cho","params":["\ud83d\ude00"]}`,
		`[]`, `{"jsonrpc":"2.0","id":6,"method":`, "\xff", ` [1, 2] `,
		`{"jsonrpc":"2.0","id":2,"method":"countdown","params":{"n":3}}`,
		`{"jsonrpc":"2.0","id":3,"method":"rpc.discover"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"a","limit":2}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sum","arguments":{"values":[1,2.5]}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		f.Add([]byte(s))
	}
	correct := New(0)
	planted := []*Server{New(AllBugs), New(DeepNesting | HugeID), New(DuplicateKey | Hang), New(LoneSurrogate | BigBatch),
		New(NegativeInt | EmptyString | LongArray)}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) > 4<<10 {
			// Big inputs (a batch of 1001 fits in 2 KiB) only slow the
			// fuzzer down: Go minimizes every new one, for up to a minute.
			t.Skip("over 4 KiB")
		}
		want, hang := correct.answer(frame)
		if hang {
			t.Fatal("hang without a planted bug")
		}
		if want != nil && !json.Valid(want) {
			t.Fatalf("reply is not JSON: %q", want)
		}
		parseErr := bytes.HasPrefix(want, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`))
		if valid := json.Valid(frame) && utf8.Valid(frame); parseErr == valid {
			t.Fatalf("encoding/json valid %v, reply %s", valid, want)
		}
		if top := bytes.TrimLeft(frame, " \t\r\n"); want == nil && (len(top) == 0 || top[0] != '{' && top[0] != '[') {
			t.Fatalf("no reply to %q", frame)
		}
		for _, s := range planted {
			got, hang, crash := s.recoverAnswer(frame, false)
			switch {
			case crash != nil:
				if s.Bugs()&crash.Bug == 0 || crash.Bug == Hang {
					t.Fatalf("crash %v with bugs %v planted", crash.Bug, s.Bugs())
				}
			case hang:
				if s.Bugs()&Hang == 0 {
					t.Fatalf("hang with bugs %v planted", s.Bugs())
				}
			case !bytes.Equal(got, want):
				t.Fatalf("bugs %v planted: reply %s, the correct server says %s", s.Bugs(), got, want)
			}
		}
	})
}
