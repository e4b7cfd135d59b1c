package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// everyTenth diverts the calls whose sequence number is a multiple of 10
// and keeps their frames.
type everyTenth struct {
	mu     sync.Mutex
	frames map[uint64]string
}

func (d *everyTenth) Takes(seq uint64, _ int) bool { return seq%10 == 0 }

func (d *everyTenth) Send(seq uint64, _ int, frame []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.frames[seq] = string(frame)
}

// TestDivert: the calls a Divert takes are handed to it as their own
// requests (the call's method and params, the sequence number as id),
// never sent on the load's connections nor counted in its figures; the
// target rate is the load's own share of the schedule.
func TestDivert(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, url := range []string{tcpURL, httpURL} {
		t.Run(url[:4], func(t *testing.T) {
			d := &everyTenth{frames: map[uint64]string{}}
			cfg := baseConfig(target(t, url)) // 1000 calls
			cfg.Divert = d
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if q.Diverted != 100 || len(d.frames) != 100 || q.Sent != 900 || q.OK != 900 || len(res.Violations) != 0 {
				t.Fatalf("diverted %d (%d frames), sent %d, ok %d, violations %v", q.Diverted, len(d.frames), q.Sent, q.OK, res.Violations)
			}
			want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":[1,"a"]}`, 500)
			if got := d.frames[500]; got != want {
				t.Errorf("frame of call 500 %s, want %s", got, want)
			}
			if res.Rate.Target != 4500 {
				t.Errorf("target rate %g, want the load's 90%% of 5000", res.Rate.Target)
			}
			// A busy machine may still send late (the warning then), but
			// against the load's own target, never the whole schedule's.
			for _, w := range res.Warnings {
				if strings.Contains(w, "achieved rate") && !strings.Contains(w, "target 4500.0") {
					t.Errorf("warning: %s", w)
				}
			}
		})
	}
}
