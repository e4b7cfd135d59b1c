// Package ratecap is the --max-rate of rpcload's closed loop and of
// rpcfuzz: a token bucket (golang.org/x/time/rate) shared by every sender
// of a run. It is a ceiling, not a schedule: an open loop needs the
// intended send time of every message, which a bucket does not give, and
// keeps its own exact schedule (internal/engine's schedule.go).
package ratecap

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// CatchUp is how far behind a cap may fall and still catch up: when no
// sender was waiting for a while (a busy machine descheduled the process,
// slow replies held every worker), they may then take the tokens of the
// last CatchUp at once. Without it every token nobody waited for is lost,
// and a loaded machine runs several per cent below the cap (50 ms of
// catch-up still lost 5 % with the race detector on a machine at load 12).
const CatchUp = 250 * time.Millisecond

// New returns a cap of perSecond events a second: the first event goes at
// once, then one every 1/perSecond, with a burst of at most CatchUp's worth
// after a stall, so any window of t holds at most 1 + perSecond·(t+CatchUp)
// events. A perSecond that is not a positive finite number is no cap: New
// returns nil.
func New(perSecond float64) *rate.Limiter {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) {
		return nil
	}
	burst := int(max(1, min(math.Ceil(perSecond*CatchUp.Seconds()), 1<<20)))
	l := rate.NewLimiter(rate.Limit(perSecond), burst)
	l.AllowN(time.Now(), burst-1) // the bucket starts with one token, not a burst
	return l
}
