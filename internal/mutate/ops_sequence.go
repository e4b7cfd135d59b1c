package mutate

import (
	"bytes"
	"slices"

	"github.com/rpcload/rpcload/internal/jsontree"
)

// Sequence ops: whole messages dropped, moved or added, for servers with
// state (a handshake, a shutdown, requests in flight).

// handshakeMethods are the messages a profile's connection opens with
// (protocols.md §2, §3). MCP's modern era has none, and jsonrpc and eth
// have no handshake at all.
func handshakeMethods(profile string) []string {
	switch profile {
	case "mcp":
		return []string{"initialize", "notifications/initialized"}
	case "lsp":
		return []string{"initialize", "initialized"}
	}
	return nil
}

// frameInfo is what the sequence ops need to know about one frame.
type frameInfo struct {
	obj       *jsontree.Node // nil when the frame is not a single object
	method    string
	handshake bool
	id        *jsontree.Node // nil for a notification
}

func inspect(frames [][]byte, profile string) []frameInfo {
	hs := handshakeMethods(profile)
	infos := make([]frameInfo, len(frames))
	for i, f := range frames {
		root, ok := parseShallow(f)
		if !ok || root.Kind != jsontree.Object {
			continue
		}
		info := frameInfo{obj: root, id: root.Get("id")}
		info.method, _ = methodName(root)
		for _, h := range hs {
			if info.method == h {
				info.handshake = true
			}
		}
		infos[i] = info
	}
	return infos
}

// isCall is a request that wants an answer and is not part of the
// connection's own life cycle.
func (fi frameInfo) isCall() bool {
	return fi.obj != nil && fi.id != nil && !isNull(fi.id) && fi.method != "" && !fi.handshake &&
		fi.method != "shutdown" && fi.method != "exit"
}

// afterHandshake is the first index after the leading handshake frames:
// where messages can be added without preventing the handshake.
func afterHandshake(infos []frameInfo) int {
	i := 0
	for i < len(infos) && infos[i].handshake {
		i++
	}
	return i
}

func insertFrames(frames [][]byte, at int, add ...[]byte) [][]byte {
	out := make([][]byte, 0, len(frames)+len(add))
	out = append(out, frames[:at]...)
	out = append(out, add...)
	return append(out, frames[at:]...)
}

// seqSkipHandshake sends requests out of the handshake's order: before
// it (the requests first, the handshake after them), without its final
// initialized notification, with one request moved ahead of initialize,
// with initialize twice, or with the handshake's messages reversed. The
// output keeps a handshake message, so the fuzzer sends it on a
// connection without a handshake of its own (internal/fuzz's
// ownHandshake) and the server meets exactly this order: a server that
// crashes on tools/call before initialize is found. A handshake left out
// entirely is the requests-first variant: the input alone must tell the
// fuzzer, in a replay too, that it brings its own lifecycle.
func seqSkipHandshake(c Chooser, in Case, env *Env) (Case, bool) {
	infos := inspect(in.Frames, env.Profile)
	var hs, calls []int
	for i, fi := range infos {
		if fi.handshake {
			hs = append(hs, i)
		} else if fi.isCall() {
			calls = append(calls, i)
		}
	}
	if len(hs) == 0 || len(calls) == 0 {
		return Case{}, false
	}
	var out [][]byte
	v := c.Intn(5)
	if len(hs) == 1 && (v == 1 || v == 4) {
		v = 3 // one handshake message cannot be cut short or reversed: sent twice
	}
	switch v {
	case 0: // the requests first, the handshake after them
		for i, f := range in.Frames {
			if !infos[i].handshake {
				out = append(out, f)
			}
		}
		for _, i := range hs {
			out = append(out, in.Frames[i])
		}
	case 1: // the last handshake message (the initialized notification) left out
		last := hs[len(hs)-1]
		out = append(append(out, in.Frames[:last]...), in.Frames[last+1:]...)
	case 2: // a request first
		k := calls[c.Intn(len(calls))]
		out = append(out, in.Frames[k])
		for i, f := range in.Frames {
			if i != k {
				out = append(out, f)
			}
		}
	case 3: // initialize twice: again right after the first
		out = insertFrames(in.Frames, hs[0]+1, in.Frames[hs[0]])
	default: // the handshake's messages in reverse order, in their places
		out = slices.Clone(in.Frames)
		for x, i := range hs {
			out[i] = in.Frames[hs[len(hs)-1-x]]
		}
	}
	return Case{Frames: out}, true
}

var (
	shutdownFrame = []byte(`{"jsonrpc":"2.0","id":"rpcfuzz-shutdown","method":"shutdown"}`)
	afterID       = []byte(`"rpcfuzz-after-shutdown"`)
)

// seqAfterShutdown (LSP) sends a request after the shutdown request, which
// a server must refuse (InvalidRequest) rather than serve. The exit
// notification is not sent: after it the server is gone by design.
func seqAfterShutdown(c Chooser, in Case, env *Env) (Case, bool) {
	if env.Profile != "lsp" {
		return Case{}, false
	}
	infos := inspect(in.Frames, env.Profile)
	var calls []int
	for i, fi := range infos {
		if fi.isCall() {
			calls = append(calls, i)
		}
	}
	if len(calls) == 0 {
		return Case{}, false
	}
	req := jsontree.Copy(infos[calls[c.Intn(len(calls))]].obj)
	req.Set("id", &jsontree.Node{Kind: jsontree.String, Raw: afterID})
	return Case{Frames: insertFrames(in.Frames, len(in.Frames), shutdownFrame, jsontree.Append(nil, req))}, true
}

// unknownIDs are ids a cancellation can name that no frame uses (checked).
var unknownIDs = lits("987654321", `"rpcfuzz-unknown"`, "-1", "0", "null", "1e400", `""`, "[]")

var (
	lspCancel = []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":`)
	mcpCancel = []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"rpcfuzz","requestId":`)
)

// seqCancelUnknown cancels a request that was never sent. Profiles without
// a cancellation of their own get either spelling.
func seqCancelUnknown(c Chooser, in Case, env *Env) (Case, bool) {
	if len(in.Frames) == 0 {
		return Case{}, false
	}
	infos := inspect(in.Frames, env.Profile)
	start := c.Intn(len(unknownIDs))
	var id []byte
	for i := range unknownIDs {
		cand := unknownIDs[(start+i)%len(unknownIDs)]
		used := false
		for _, fi := range infos {
			if fi.id != nil && bytes.Equal(jsontree.Append(nil, fi.id), cand) {
				used = true
			}
		}
		if !used {
			id = cand
			break
		}
	}
	if id == nil {
		return Case{}, false
	}
	prefix := lspCancel
	switch env.Profile {
	case "lsp":
	case "mcp":
		prefix = mcpCancel
	default:
		if c.Intn(2) == 0 {
			prefix = mcpCancel
		}
	}
	cancel := append(append(clone(prefix), id...), "}}"...)
	at := afterHandshake(infos)
	at += c.Intn(len(in.Frames) - at + 1)
	return Case{Frames: insertFrames(in.Frames, at, cancel)}, true
}

// seqSameIDTwice sends a second request under the id of one still in
// flight: the same request again, or another one given that id.
func seqSameIDTwice(c Chooser, in Case, env *Env) (Case, bool) {
	infos := inspect(in.Frames, env.Profile)
	var calls []int
	for i, fi := range infos {
		if fi.isCall() {
			calls = append(calls, i)
		}
	}
	if len(calls) == 0 {
		return Case{}, false
	}
	k := calls[c.Intn(len(calls))]
	second := in.Frames[k]
	if other := calls[c.Intn(len(calls))]; other != k {
		o := jsontree.Copy(infos[other].obj)
		o.Set("id", infos[k].id)
		second = jsontree.Append(nil, o)
	}
	return Case{Frames: insertFrames(in.Frames, k+1, second)}, true
}

var floodCounts = []int{10, 100, 1000}

// seqNotificationFlood adds many notifications (a request of the case with
// its id removed) right after the handshake or later; the whole flood stays
// within MaxFrame bytes.
func seqNotificationFlood(c Chooser, in Case, env *Env) (Case, bool) {
	infos := inspect(in.Frames, env.Profile)
	var sources []int
	for i, fi := range infos {
		if fi.obj != nil && fi.method != "" && !fi.handshake {
			sources = append(sources, i)
		}
	}
	if len(sources) == 0 {
		return Case{}, false
	}
	note := jsontree.Copy(infos[sources[c.Intn(len(sources))]].obj)
	note.Remove("id")
	text := jsontree.Append(nil, note)
	n, ok := pickSize(c, floodCounts, len(text), env.maxFrame()/len(text), 2)
	if !ok {
		return Case{}, false
	}
	add := make([][]byte, n)
	for i := range add {
		add[i] = text // shared: frames are never written
	}
	at := afterHandshake(infos)
	at += c.Intn(len(in.Frames) - at + 1)
	return Case{Frames: insertFrames(in.Frames, at, add...)}, true
}
