package oracle

import (
	"bytes"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// parseErrorTolerates applies the tolerances for input that is not JSON:
// a readable prefix or a frame readable without a BOM or Unicode spaces
// (judged as that JSON), JSON extensions, nesting beyond encoding/json.
func (q *request) parseErrorTolerates(reply []byte, r *wire.Message) bool {
	if alt, ok := readableAlternative(q.raw); ok {
		var s check.Set
		var aq request
		aq.init(alt, 0, q.frameLen)
		switch aq.class {
		case Batch:
			s, _ = judgeBatch(alt, reply, r)
		case EmptyBatch:
			s, _ = judgeEmptyBatch(r)
		case ParseError:
			s = check.Set(0).Add(check.WrongErrorCode)
		default:
			s, _ = aq.judgeFrame(r)
		}
		if s == 0 {
			return true
		}
	}
	return hasJSONExtension(q.raw) || tooDeepForScan(q.raw)
}

// readableAlternative returns the JSON a lenient reader could have taken
// from frame: frame without a leading BOM and Unicode spaces or NULs around
// it, or the first whole JSON value when more follows (what a stream
// decoder such as encoding/json's Decoder reads first).
func readableAlternative(frame []byte) ([]byte, bool) {
	var m wire.Message
	trimmed := bytes.TrimLeft(bytes.TrimSpace(bytes.TrimPrefix(frame, []byte("\uFEFF"))), "\x00")
	trimmed = bytes.TrimSpace(bytes.TrimRight(trimmed, "\x00"))
	if len(trimmed) < len(frame) && len(trimmed) > 0 {
		if wire.Scan(trimmed, &m); !m.Problems.Has(wire.ProblemInvalidJSON) {
			return trimmed, true
		}
	}
	end := firstValueEnd(frame, wire.SkipSpace(frame, 0))
	if end <= 0 || end >= len(frame) {
		return nil, false
	}
	if wire.Scan(frame[:end], &m); m.Problems.Has(wire.ProblemInvalidJSON) {
		return nil, false
	}
	return frame[:end], true
}

// firstValueEnd returns where the JSON value starting at d[i] would end if
// it is valid (the caller checks that), or -1 when no value starts there.
// A number ends where its grammar does, as in a stream decoder: "01" reads
// as 0 followed by more.
func firstValueEnd(d []byte, i int) int {
	if i >= len(d) {
		return -1
	}
	switch c := d[i]; {
	case c == '{' || c == '[' || c == '"':
		return wire.SkipValue(d, i)
	case c == '-' || c >= '0' && c <= '9':
		return numberEnd(d, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(d[i:], []byte(lit)) {
			return i + len(lit)
		}
	}
	return -1
}

// numberEnd returns the end of the longest JSON number starting at d[i],
// or i when none does.
func numberEnd(d []byte, i int) int {
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := func(i int) int {
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(i)
	default:
		return start
	}
	if i+1 < len(d) && d[i] == '.' && d[i+1] >= '0' && d[i+1] <= '9' {
		i = digits(i + 1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		j := i + 1
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if j < len(d) && d[j] >= '0' && d[j] <= '9' {
			i = digits(j)
		}
	}
	return i
}

// hasJSONExtension reports whether frame, outside its double-quoted strings,
// uses a common non-JSON form: NaN, Infinity, undefined, a bare member name,
// a comment, a single-quoted string, a leading '+', or a trailing comma.
func hasJSONExtension(frame []byte) bool {
	for i := 0; i < len(frame); i++ {
		c := frame[i]
		switch {
		case c == '"':
			i = wire.SkipString(frame, i) - 1
		case c == '/' || c == '\'':
			return true
		case c == '+':
			if i == 0 || frame[i-1]|0x20 != 'e' {
				return true
			}
		case c == ',':
			if j := wire.SkipSpace(frame, i+1); j < len(frame) && (frame[j] == ']' || frame[j] == '}') {
				return true
			}
		case c|0x20 >= 'a' && c|0x20 <= 'z' || c == '_' || c == '$':
			j := i
			for j < len(frame) && (frame[j]|0x20 >= 'a' && frame[j]|0x20 <= 'z' || frame[j] >= '0' && frame[j] <= '9' || frame[j] == '_' || frame[j] == '$') {
				j++
			}
			word := string(frame[i:j])
			if word == "NaN" || word == "Infinity" || word == "undefined" {
				return true
			}
			if k := wire.SkipSpace(frame, j); k < len(frame) && frame[k] == ':' && word != "true" && word != "false" && word != "null" {
				return true
			}
			i = j - 1
		}
	}
	return false
}

// tooDeepForScan reports whether frame holds more open brackets than
// wire.Scan (like encoding/json) accepts nesting, so that it may be JSON
// the scanner refused only for its depth.
func tooDeepForScan(frame []byte) bool {
	return bytes.Count(frame, []byte("["))+bytes.Count(frame, []byte("{")) > wire.DefaultMaxDepth
}
