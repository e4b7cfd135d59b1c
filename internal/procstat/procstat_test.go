//go:build linux

package procstat

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name, in string
		want     Stat
		err      string
	}{
		{name: "running", in: "Name:\tx\nVmRSS:\t  12345 kB\nThreads:\t7\n", want: Stat{RSSBytes: 12345 << 10, Threads: 7}},
		{name: "zombie", in: "Name:\tx\nThreads:\t1\n", err: "no VmRSS"},
		{name: "no threads", in: "VmRSS:\t1 kB\n", err: "no Threads"},
		{name: "odd unit", in: "VmRSS:\t1 MB\nThreads:\t1\n", err: "unreadable VmRSS"},
		{name: "garbage count", in: "VmRSS:\t1 kB\nThreads:\tmany\n", err: "unreadable Threads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestReadSelfAndChild reads this process and a child: an open file more
// shows as one descriptor more, and a process that has exited is an error.
func TestReadSelfAndChild(t *testing.T) {
	before, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.RSSBytes <= 0 || before.Threads < 1 || before.OpenFDs < 3 {
		t.Fatalf("implausible reading of this process: %+v", before)
	}
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	after, err := Read(os.Getpid())
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Other goroutines of the test binary may open files too: at least one more.
	if after.OpenFDs < before.OpenFDs+1 {
		t.Errorf("open fds %d after opening a file, %d before", after.OpenFDs, before.OpenFDs)
	}

	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	pid := cmd.Process.Pid
	if s, err := Read(pid); err != nil || s.Threads != 1 {
		t.Errorf("child: %+v, %v; want one thread", s, err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := Read(pid); err == nil {
		t.Errorf("reading process %d after it was reaped succeeded", pid)
	}
	if _, err := Read(0); err == nil {
		t.Error("Read(0) succeeded")
	}
}

// FuzzParseStatus: any /proc/PID/status text is read or refused with an
// error, never a panic, and what is read is never negative (a VmRSS in kB
// past what bytes can hold is refused, not wrapped).
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Name:\tx\nVmRSS:\t  12345 kB\nThreads:\t7\n"))
	f.Add([]byte("VmRSS:\t9223372036854775807 kB\nThreads:\t1\n"))
	f.Add([]byte("Threads:\t1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStatus(b)
		if err == nil && (s.RSSBytes < 0 || s.Threads < 0) {
			t.Fatalf("read %+v from %q", s, b)
		}
	})
}
