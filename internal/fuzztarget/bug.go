package fuzztarget

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// Bug is a set of planted bugs, one bit each.
type Bug uint16

// The planted bugs; see the package documentation for their triggers. The
// first seven live in the JSON-RPC layer (the tokenizer and the envelope),
// the last three in method handlers.
const (
	DeepNesting Bug = 1 << iota
	HugeID
	DuplicateKey
	LoneSurrogate
	BigBatch
	Hang
	NullBatch
	NegativeInt // countdown
	EmptyString // the MCP tool search
	LongArray   // the MCP tool sum
)

// AllBugs plants every bug.
const AllBugs = DeepNesting | HugeID | DuplicateKey | LoneSurrogate | BigBatch | Hang | NullBatch |
	NegativeInt | EmptyString | LongArray

// bugNames are the flag names, in bit order.
var bugNames = [...]string{"deep_nesting", "huge_id", "duplicate_key", "lone_surrogate", "big_batch", "hang", "null_batch",
	"negative_int", "empty_string", "long_array"}

// protocolBugs is how many of the bits, from the lowest, are bugs of the
// JSON-RPC layer; the rest are handler bugs.
const protocolBugs = 7

// Bugs returns the bugs of the JSON-RPC layer (deep_nesting through
// null_batch), one each, in a fixed order (the order of String): the ones a
// fuzzer finds knowing no more of the API than the methods echo and add
// and its corpus, which is what the fuzzers' planted-bug tests hold them
// to. HandlerBugs returns the others.
func Bugs() []Bug { return bugRange(0, protocolBugs) }

// HandlerBugs returns the bugs planted in method handlers (negative_int,
// empty_string, long_array), one each, in the order of String: an
// API-aware fuzzer reaches them from the OpenRPC document (rpc.discover)
// or the MCP tool list (tools/list).
func HandlerBugs() []Bug { return bugRange(protocolBugs, len(bugNames)) }

// bugRange returns the single bugs of bits from to to-1.
func bugRange(from, to int) []Bug {
	out := make([]Bug, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, 1<<i)
	}
	return out
}

// String returns the names of the bugs in b joined by commas ("" for none),
// the form ParseBugs reads back; unknown bits show as bug(N).
func (b Bug) String() string {
	var names []string
	for rest := b; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros16(uint16(rest))
		if i < len(bugNames) {
			names = append(names, bugNames[i])
		} else {
			names = append(names, fmt.Sprintf("bug(%d)", i))
		}
	}
	return strings.Join(names, ",")
}

// ErrUnknownBug is wrapped by ParseBugs' errors.
var ErrUnknownBug = errors.New("unknown planted bug")

// ParseBugs reads a comma-separated list of bug names, or "all". Spaces
// around names are ignored; an empty list is no bug.
func ParseBugs(list string) (Bug, error) {
	var b Bug
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			b |= AllBugs
			continue
		}
		found := false
		for i, n := range bugNames {
			if n == name {
				b |= 1 << i
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("%w %q (valid: all, %s)", ErrUnknownBug, name, strings.Join(bugNames[:], ", "))
		}
	}
	return b, nil
}

// Crash is the panic value (and, from ServeStream, the error) of a planted
// crash. Its message names the bug, so a crash report says which one fired.
type Crash struct{ Bug Bug }

// Error returns "fuzztarget: planted bug NAME".
func (c Crash) Error() string { return "fuzztarget: planted bug " + c.Bug.String() }

// TriggerFrame returns a small frame that triggers b (a single bug) when it
// is planted; without it the frame is answered normally. Fuzzer tests use it
// as the known answer a minimized finding should resemble. Unknown or
// combined bits return nil.
func TriggerFrame(b Bug) []byte {
	switch b {
	case DeepNesting:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`)
	case HugeID:
		return []byte(`{"jsonrpc":"2.0","id":9223372036854775808,"method":"echo","params":[1]}`)
	case DuplicateKey:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","method":"add","params":[1,2]}`)
	case LoneSurrogate:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":["\ud800"]}`)
	case BigBatch:
		req := `{"jsonrpc":"2.0","id":1,"method":"echo"}`
		return []byte("[" + strings.Repeat(req+",", crashBatch) + req + "]")
	case Hang:
		return []byte(`{"jsonrpc":"2.0","id":-0,"method":"","params":[1]}`)
	case NullBatch:
		return []byte(`[null]`)
	case NegativeInt:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":-1}}`)
	case EmptyString:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":""}}}`)
	case LongArray:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sum","arguments":{"values":[` +
			strings.Repeat("0,", maxSumValues) + `0]}}}`)
	}
	return nil
}
