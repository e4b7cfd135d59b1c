package fuzztarget

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// Bug is a set of planted bugs, one bit each.
type Bug uint16

// The planted bugs; see the package documentation for their triggers.
const (
	DeepNesting Bug = 1 << iota
	HugeID
	DuplicateKey
	LoneSurrogate
	BigBatch
	Hang
	NullBatch
)

// AllBugs plants every bug.
const AllBugs = DeepNesting | HugeID | DuplicateKey | LoneSurrogate | BigBatch | Hang | NullBatch

// bugNames are the flag names, in bit order.
var bugNames = [...]string{"deep_nesting", "huge_id", "duplicate_key", "lone_surrogate", "big_batch", "hang", "null_batch"}

// Bugs returns every single bug, in a fixed order (the order of String).
func Bugs() []Bug {
	out := make([]Bug, len(bugNames))
	for i := range out {
		out[i] = 1 << i
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
	}
	return nil
}
