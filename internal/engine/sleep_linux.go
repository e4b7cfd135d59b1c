package engine

import (
	"runtime"
	"syscall"
	"time"
)

// lockDispatcherThread pins the dispatcher to its own OS thread and sets that
// thread's timer slack to 1 ns (prctl PR_SET_TIMERSLACK), so preciseSleep
// wakes within tens of microseconds instead of the default 50 µs slack plus
// scheduling noise. The caller unlocks the thread when dispatching ends.
func lockDispatcherThread() {
	runtime.LockOSThread()
	const prSetTimerSlack = 29
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
}

// preciseSleep blocks the calling thread in nanosleep(2), which the kernel
// wakes with high-resolution timers; the Go runtime hands the processor to
// other goroutines meanwhile.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
