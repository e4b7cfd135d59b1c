package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// watchPeakRSS samples the peak resident set size of process pid (VmHWM
// in /proc/PID/status, in bytes) every few milliseconds until stop is
// closed, and then sends the last peak read (0: none). Not ru_maxrss: a
// child started with vfork carries its parent's high-water mark in it (the
// kernel keeps the old address space's peak at exec), which under -race is
// the test process's own hundreds of MiB.
func watchPeakRSS(pid int, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		path := fmt.Sprintf("/proc/%d/status", pid)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if data, err := os.ReadFile(path); err == nil {
				if i := bytes.Index(data, []byte("VmHWM:")); i >= 0 {
					f := bytes.Fields(data[i+len("VmHWM:"):])
					if len(f) > 0 {
						if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
							peak = max(peak, kb<<10)
						}
					}
				}
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}
