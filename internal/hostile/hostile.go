// Package hostile is a JSON-RPC server that misbehaves on purpose, for the
// chaos tests of rpcload and rpcfuzz: replies of a gigabyte, lines that never
// end, lying Content-Length headers, endless SSE keep-alives, WebSocket
// messages in thousands of fragments, replies trickled a byte at a time,
// floods of unsolicited messages, connections that are never read or are
// reset, every request answered twice, and child processes that flood
// stderr, close stdout or ignore SIGTERM.
//
// Every listener is on 127.0.0.1, every loop ends when the server is closed
// (or, in a child process, after a fixed lifetime), and nothing a mode sends
// is held in memory: a 1 GiB reply is streamed from a 64 KiB buffer.
package hostile

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// Mode is one way of misbehaving.
type Mode string

// The modes.
const (
	// HugeReply answers each request with a reply of HugeSize bytes,
	// streamed.
	HugeReply Mode = "huge-reply"
	// EndlessLine starts a reply and never ends it: a line (an SSE data
	// line, an HTTP status line, a Content-Length header line, an unfinished
	// WebSocket message) that grows until the connection closes.
	EndlessLine Mode = "endless-line"
	// HugeLength announces a body of HugeLengthValue bytes (Content-Length,
	// or a WebSocket frame length) and sends a few.
	HugeLength Mode = "huge-content-length"
	// KeepAlives answers with an SSE stream of comment lines only, forever.
	KeepAlives Mode = "sse-keepalives"
	// Fragments sends each reply as a WebSocket message split into
	// FragmentCount one-byte frames.
	Fragments Mode = "ws-fragments"
	// Slowloris trickles each reply one byte per TrickleEvery.
	Slowloris Mode = "slowloris"
	// Flood answers requests correctly while sending notifications and
	// requests of its own as fast as the connection takes them.
	Flood Mode = "flood"
	// NeverRead accepts connections and never reads from them (after the
	// handshake, where there is one).
	NeverRead Mode = "never-read"
	// Reset reads one request on each connection and resets it (a child
	// process exits instead).
	Reset Mode = "reset"
	// Twice answers every request twice.
	Twice Mode = "answer-twice"
	// StderrFlood (child process) answers correctly and writes to stderr as
	// fast as it is read.
	StderrFlood Mode = "stderr-flood"
	// CloseStdout (child process) closes stdout at once and keeps running.
	CloseStdout Mode = "close-stdout"
	// IgnoreTerm (child process) answers correctly, ignores SIGTERM and the
	// end of its stdin: only SIGKILL ends it.
	IgnoreTerm Mode = "ignore-sigterm"
)

// Modes lists every mode, in a fixed order.
var Modes = []Mode{HugeReply, EndlessLine, HugeLength, KeepAlives, Fragments, Slowloris, Flood, NeverRead, Reset, Twice, StderrFlood, CloseStdout, IgnoreTerm}

// Transport is where a hostile server listens and how it frames messages.
type Transport string

// The transports.
const (
	TCP     Transport = "tcp"      // newline-delimited JSON over TCP
	TCPLSP  Transport = "tcp+lsp"  // Content-Length framing over TCP
	HTTP    Transport = "http"     // HTTP/1.1 POST, written by hand so it can lie
	WS      Transport = "ws"       // WebSocket, data frames written by hand
	MCP     Transport = "mcp"      // MCP Streamable HTTP (legacy era), replies as SSE streams
	Stdio   Transport = "stdio"    // a child process, newline framing
	StdioCL Transport = "stdio+cl" // a child process, Content-Length framing
)

// Transports lists every transport, in a fixed order.
var Transports = []Transport{TCP, TCPLSP, HTTP, WS, MCP, Stdio, StdioCL}

// Sizes and paces of the modes.
const (
	HugeSize        = 1 << 30 // bytes of a HugeReply reply
	HugeLengthValue = 1 << 62 // the length HugeLength announces
	FragmentCount   = 5000    // frames of one Fragments message
	TrickleEvery    = 100 * time.Millisecond
	// chunk is the buffer every streamed reply is written from.
	chunk = 64 << 10
	// maxRequest bounds a request frame the server reads; longer ones are
	// skipped.
	maxRequest = 1 << 20
	// floodMax bounds the messages one flooding connection sends.
	floodMax = 50_000_000
)

// Applies reports whether m has a meaning on t. The child-process modes
// apply to child processes only; KeepAlives to SSE; Fragments to
// WebSocket; HugeLength to the framings with a length; Flood to the
// transports where a server can send what was not asked for.
func Applies(m Mode, t Transport) bool {
	child := t == Stdio || t == StdioCL
	switch m {
	case StderrFlood, CloseStdout, IgnoreTerm:
		return child
	case KeepAlives:
		return t == MCP
	case Fragments:
		return t == WS
	case HugeLength:
		return t == TCPLSP || t == HTTP || t == WS || t == MCP || t == StdioCL
	case Flood:
		return t != HTTP
	case HugeReply, EndlessLine, Slowloris, NeverRead, Reset, Twice:
		return true
	}
	return false
}

// request is what the server reads of a request: its id (nil for a
// notification or something that is not JSON-RPC) and method.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// parse reads a request frame; ok is false for a frame without an id to
// answer (a notification, a response, anything unreadable).
func parse(frame []byte) (request, bool) {
	var q request
	if json.Unmarshal(frame, &q) != nil || len(q.ID) == 0 || string(q.ID) == "null" || q.Method == "" {
		return q, false
	}
	return q, true
}

// okReply is a correct reply to id.
func okReply(id []byte) []byte {
	return append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":"ok"}`...)
}

// hugePrefix and hugeSuffix surround the filler of a HugeReply reply.
func hugePrefix(id []byte) []byte {
	return append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":"`...)
}

var hugeSuffix = []byte(`"}`)

// filler is what long replies are made of.
var filler = bytes.Repeat([]byte("a"), chunk)

// floodMessage is the nth unsolicited message of a flood: notifications,
// with a request every fourth message.
func floodMessage(dst []byte, n int) []byte {
	if n%4 == 3 {
		dst = append(dst, `{"jsonrpc":"2.0","id":"hostile-`...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		return append(dst, `","method":"hostile/ask","params":{}}`...)
	}
	dst = append(dst, `{"jsonrpc":"2.0","method":"hostile/note","params":{"n":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, `}}`...)
}

// fragmentedReply is a correct reply padded with spaces to FragmentCount
// bytes, so that one byte per frame makes FragmentCount frames.
func fragmentedReply(id []byte) []byte {
	r := okReply(id)
	if len(r) < FragmentCount {
		r = append(r, bytes.Repeat([]byte(" "), FragmentCount-len(r))...)
	}
	return r
}
