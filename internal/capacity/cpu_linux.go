package capacity

import (
	"bytes"
	"os"
	"strconv"
)

// machineCPU reads the machine's busy and total CPU time, in clock ticks,
// from the first line of /proc/stat (user nice system idle iowait irq
// softirq steal ...); idle and iowait are the time not busy. total is 0
// when it cannot be read.
func machineCPU() (busy, total uint64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 5 || string(fields[0]) != "cpu" {
		return 0, 0
	}
	var idle uint64
	// guest and guest_nice (9th and 10th) are already counted in user and nice.
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return 0, 0
		}
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return total - idle, total
}
