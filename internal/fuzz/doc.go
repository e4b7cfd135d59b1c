// Package fuzz is the black-box engine of rpcfuzz: it sends structure-aware
// mutations of seed envelopes to a JSON-RPC server over any transport
// rpcload speaks, judges every reply with the oracles of package check,
// keeps the inputs that produce a reply tuple it has not seen (the feedback
// a black box allows), and turns each distinct failure into a minimized,
// replayable finding.
//
// # The loop
//
// Each worker owns one connection. It picks an input from the working
// corpus (the seeds, then what proved new), mutates it (package mutate),
// sends it and waits for the replies the oracles say it is owed:
//
//   - On a stream (TCP, Unix socket, WebSocket, a child's stdio) the frames
//     are written with the transport's framing, then a sync request of the
//     fuzzer's own ("rpcfuzz-sync-N"). Its reply shows that the server read
//     everything before it; replies owed to calls are waited for until the
//     timeout (silence is a hang), replies without an id for a grace
//     after it (until the timeout once the server answered later than
//     that), and a reply owed to nothing (to a notification) arrives
//     before it. Replies are paired with frames by id and by the order of
//     the input, required frames first; a reply of the input before that
//     comes late is set aside, never judged. Input that breaks the
//     framing on purpose (mutate.Case.Wire) is written as is and the
//     stream half-closed (stdin closed, for a child): its reply is whatever
//     comes before the end of the stream.
//   - Over HTTP each frame is one POST; a 5xx status, or a connection the
//     server closes or resets instead of answering, is a crash. A 4xx status
//     without a JSON body is an HTTP-level refusal, not judged further.
//   - A child process that exits with a failure status or a signal crashed:
//     its stderr tail is kept, and a new one is started for the next input.
//     Crashes are findings and the run goes on; only children that cannot
//     start, or die in their handshake or on a known-good request,
//     MaxRestarts+1 times in a row stop it.
//
// Feedback: an input is kept when it produces a new (transport status,
// reply kind, error code, rules broken, log2 latency, error message class)
// tuple, and the ops that made it are rewarded. A canary (a seed call with a known answer) is sent
// after every CanaryEvery inputs and after each finding, on the worker's
// connection and on a fresh one; a wrong answer is canary_failed, blamed on
// the input among the last ones that poisons a clean server alone.
//
// # Findings
//
// A failure is known by its dedup key: the rule, the error code and the
// deviation (the reply's structure without its values and the oracle's
// note with its values blanked; for a batch, the element that broke the
// rule; for a crashed child, the line of its stderr that names the crash,
// paths, quoted text and numbers blanked). A new key is re-run to
// confirm it, minimized (minimize.go), and written to OutDir/<rule>-<hash>/
// with the exact input bytes, the reply, finding.json and reproducers.
// summary.json and latency.json (a stats.Result, so rpcload report reads
// it) describe the run.
package fuzz
