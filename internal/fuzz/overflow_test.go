package fuzz

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/transport"
)

// TestRepliesReadWhileWriting: an input of 2,000 calls (1.1 MB) to a
// child that answers each line before it reads the next (1 KB a reply)
// over pipes of 64 KB is answered in full, and judged clean. The reader
// keeps reading while the input is still being written; stopped on a
// full channel, it left the child blocked on its replies, no longer
// reading, and the rest of the input never went out: a false hang.
func TestRepliesReadWhileWriting(t *testing.T) {
	tg, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	params := strings.Repeat("p", 500)
	for i := range 2000 {
		frames = append(frames, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":["%s"]}`, i+1, params))
	}
	feed := make(chan mutate.Case, 1)
	feed <- mutate.Case{Frames: frames}
	close(feed)
	cfg := Config{Target: tg, Child: transport.ChildOptions{Env: []string{childEnv + "=sequential"}, Grace: time.Second},
		Workers: 1, Feed: feed, Seed: 1, OutDir: t.TempDir(), Timeout: 5 * time.Second, CanaryEvery: -1, SlowFloor: time.Hour}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Execs != 1 || len(s.Findings) != 0 || s.Unconfirmed != 0 {
		for _, f := range s.Findings {
			t.Logf("finding %s: %s", f.ID, f.Note)
		}
		t.Errorf("%d inputs, findings %v, %d unconfirmed; want 1 input judged clean", s.Execs, s.FindingsByRule, s.Unconfirmed)
	}
}
