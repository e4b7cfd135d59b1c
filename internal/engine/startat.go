package engine

import (
	"errors"
	"fmt"
	"time"
)

// MaxStartWait bounds how far in the future --start-at may be (a shard
// waits for it with its connections open).
const MaxStartWait = 24 * time.Hour

// waitStart blocks until at (wall clock), or until ctx ends. A start time
// already past is no wait; the caller reports how late the start was.
func waitStart(done <-chan struct{}, at time.Time, now func() time.Time) error {
	d := at.Sub(now())
	if d <= 0 {
		return nil
	}
	if d > MaxStartWait {
		return fmt.Errorf("--start-at %s is more than %s away", at.Format(time.RFC3339), MaxStartWait)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-done:
		return errStartCancelled
	}
}

var errStartCancelled = errors.New("interrupted while waiting for --start-at")
