// Package rpcfuzz fuzzes a Go JSON-RPC 2.0 server in-process with Go's own
// coverage-guided fuzzer (go test -fuzz), judging every reply by the
// oracles of rpcload and the black-box rpcfuzz run.
//
// In a _test.go file of the server's package:
//
//	func FuzzRPC(f *testing.F) {
//		rpcfuzz.Fuzz(f, rpcfuzz.Handler(NewHandler()), rpcfuzz.Options{
//			Methods: []string{"eth_blockNumber", "eth_getBalance"},
//		})
//	}
//
// then fuzz with go test -run '^$' -fuzz '^FuzzRPC$' -fuzztime 60s, and let
// plain go test replay the seeds and testdata/fuzz/FuzzRPC as regression
// tests. Handler, Func and Stream adapt an http.Handler, a function from
// request to reply bytes and a newline-delimited stream server; any other
// server is a Target of its own.
//
// # Inputs
//
// Fuzz's function takes one []byte. Bytes in the literal form (Literal:
// 0xFF, a uvarint message count, each message as a uvarint length and its
// bytes, optionally 0xFF and raw stream bytes) are sent as they are.
// Anything else is a choice stream: its first byte picks a seed (the
// shipped corpus for Options.Profile, a call of each of Options.Methods,
// then Options.Seeds) and the rest drives up to four rounds of rpcfuzz's
// mutations over it, one round per 16 bytes. The mutations' weights never
// change during a run, so the same bytes make the same messages, and Go's
// coverage guidance steers (docs/fuzzing-native.md has the details).
//
// # Oracles
//
// Each message's reply is judged with the fuzz oracles rpcfuzz run uses:
// crashes (a panic in the target, recovered on the goroutine that called
// it and reported with that goroutine's stack; an error from RoundTrip or
// serve; an HTTP 5xx), hangs (no reply within Options.Timeout), replies to
// notifications, wrong or retyped ids, wrong error codes for unparseable
// input and invalid requests, malformed envelopes, batch replies that miss
// or invent elements. Where the JSON-RPC or JSON text leaves the server a
// choice, every allowed answer passes. A finding fails the input through
// t.Fatal with a message like:
//
//	rpcfuzz: crash (JSON-RPC 2.0 §5 (the server must reply to every call)): panic: runtime error: index out of range [3] with length 3
//	input: seed "jsonrpc/call-positional.json" after params_arity, message 1 of 1
//	sent (54 bytes): "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"add\",\"params\":[1,2]}"
//	reply: none
//	target stack:
//	goroutine 21 [running]:
//	...
//
//	The input Go saves is a choice stream, which replays this input only with this version of rpcfuzz's corpus and mutator.
//	rpcfuzz minimize testdata/fuzz/FuzzRPC/FILE, on the file Go saves, shrinks its messages to the smallest literal case that fails and writes a regression test for it;
//	or, to keep this input unshrunk as a regression test for good, save its literal form as testdata/fuzz/FuzzRPC/rpcfuzz-3f2a9c0d1e7b5a44:
//	go test fuzz v1
//	[]byte("\xff\x016{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"add\",\"params\":[1,2]}")
//
// Options.Ignore silences known deviations: a rule by id, or only the
// findings of a rule whose note, message or reply match a pattern
// (IgnoreMatching); warnings (slow_input) are logged unless
// Options.FailOnWarnings.
//
// # Minimized regression tests
//
// rpcfuzz minimize, given the file Go saved for a failure
// (testdata/fuzz/FuzzRPC/FILE), shrinks its messages to the smallest
// literal case that still fails with the same rule, writes it into
// testdata/rpcfuzz/ and writes a regression test that calls Replay on it.
// Both run the fuzz test as a driven run: its test binary, started with
// the environment variables RPCFUZZ_NATIVE_INPUT (a corpus file) and
// RPCFUZZ_NATIVE_OUTCOME (a file to write), runs that one input as the
// fuzz test's only seed and writes its messages and verdict; Fuzz does
// that whenever both are set (docs/fuzzing-native.md).
//
// # OSS-Fuzz
//
// Fuzz uses only Add, Fuzz, Fatal and Helper of its F, and calls Fuzz with
// a function of one []byte: a func(*testing.T, []byte) for a *testing.F, a
// func(T, []byte) for any other F, such as the stand-in OSS-Fuzz's
// compile_native_go_fuzzer puts in place of testing.F. Nothing calls
// os.Exit, and no goroutine outlives its input unless the target hung.
package rpcfuzz
