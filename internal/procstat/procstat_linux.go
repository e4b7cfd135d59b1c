//go:build linux

package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
)

// Supported reports whether Read works on this system.
const Supported = true

// Read reads process pid's figures from /proc/PID/status (VmRSS,
// Threads) and /proc/PID/fd (one entry per open descriptor). Counting
// the descriptors needs the permission to look into the process (the
// same user, or root); without it Read fails and says so.
func Read(pid int) (Stat, error) {
	if pid <= 0 {
		return Stat{}, fmt.Errorf("procstat: no process %d", pid)
	}
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/status")
	if errors.Is(err, fs.ErrNotExist) {
		return Stat{}, fmt.Errorf("procstat: no process %d (it has exited, or never ran)", pid)
	}
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: reading process %d: %w", pid, err)
	}
	s, err := parseStatus(b)
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: process %d: %w", pid, err)
	}
	if s.OpenFDs, err = countFDs(dir + "/fd"); err != nil {
		return Stat{}, fmt.Errorf("procstat: counting the open files of process %d: %w", pid, err)
	}
	return s, nil
}

// parseStatus reads VmRSS (in kB) and Threads from a /proc/PID/status
// file. A process that is exiting (a zombie) has no VmRSS.
func parseStatus(b []byte) (Stat, error) {
	var s Stat
	var rss, threads bool
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) != 2 || string(f[1]) != "kB" {
				return s, fmt.Errorf("unreadable VmRSS line %q", bytes.TrimSpace(line))
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil || kb < 0 || kb > math.MaxInt64>>10 {
				return s, fmt.Errorf("unreadable VmRSS line %q", bytes.TrimSpace(line))
			}
			s.RSSBytes, rss = kb<<10, true
		} else if rest, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
			if err != nil || n < 0 {
				return s, fmt.Errorf("unreadable Threads line %q", bytes.TrimSpace(line))
			}
			s.Threads, threads = n, true
		}
	}
	switch {
	case !rss:
		return s, errors.New("no VmRSS (exiting?)")
	case !threads:
		return s, errors.New("no Threads line")
	}
	return s, nil
}

// countFDs counts the entries of a /proc/PID/fd directory without
// keeping their names: a server may hold tens of thousands.
func countFDs(dir string) (int64, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for {
		names, err := f.Readdirnames(1024)
		n += int64(len(names))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
