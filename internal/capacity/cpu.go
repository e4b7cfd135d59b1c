package capacity

import (
	"time"

	"github.com/rpcload/rpcload/internal/proccpu"
)

// CPUSample is a reading of the CPU clocks a step is judged by: the CPU
// time of rpcload's own process and the machine's busy and total CPU time.
type CPUSample struct {
	at          time.Time
	self        time.Duration // user + system time of this process
	busy, total uint64        // the machine's, in clock ticks; total 0 = unknown
}

// SampleCPU reads the clocks now.
func SampleCPU() CPUSample {
	s := CPUSample{at: time.Now()}
	s.self, _ = proccpu.Self() // (0 where unknown: a step is never judged by it)
	s.busy, s.total = machineCPU()
	return s
}

// Since is what the CPUs did from earlier to s: this process's CPU time in
// cores (CPU seconds per second), and the busy share of the machine's CPU
// time, -1 where the machine's clocks cannot be read.
func (s CPUSample) Since(earlier CPUSample) (cores, busy float64) {
	busy = -1
	if wall := s.at.Sub(earlier.at); wall > 0 {
		cores = float64(s.self-earlier.self) / float64(wall)
	}
	if s.total > earlier.total && earlier.total > 0 {
		busy = float64(s.busy-earlier.busy) / float64(s.total-earlier.total)
	}
	return cores, busy
}
