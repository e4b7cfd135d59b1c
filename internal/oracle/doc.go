// Package oracle is the fuzz oracle of rpcload's two fuzzing modes: what
// the JSON-RPC 2.0 text requires a server to answer to one input frame
// (ClassifyRequest), and whether the reply it gave is that answer
// (JudgeFuzzReply), with every tolerance the JSON and JSON-RPC texts allow
// so that no finding blames a server for a choice the spec leaves it.
//
// The files follow the seams of a judgement: classify.go sorts an input;
// judge.go and strict.go hold a reply to the strict answer; tolerate.go,
// lenient.go and walk.go find the traits of an input that leave the server
// a choice; batch.go, pairing.go, settle.go and index.go pair a batch's
// replies with its elements, and assign.go (Pairing) lends the same
// pairing to a stream's replies and frames; notes.go writes the notes.
//
// The rule names and their rank are package check's, and so is the check of
// a reply's envelope. The spec tables and the reasoning behind each verdict
// and tolerance are in docs/oracle.md.
package oracle
