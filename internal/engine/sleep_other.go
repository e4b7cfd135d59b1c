//go:build !linux

package engine

import (
	"runtime"
	"time"
)

// lockDispatcherThread pins the dispatcher to its own OS thread.
func lockDispatcherThread() { runtime.LockOSThread() }

// preciseSleep falls back to time.Sleep where nanosleep's precision is not
// known to help.
func preciseSleep(d time.Duration) { time.Sleep(d) }
