// Package procstat reads what the kernel tells of a running process: its
// resident memory, its threads and its open file descriptors. A soak
// samples them every interval for the server it watches (a stdio child,
// or --server-pid), so reading them must be cheap and must never block.
package procstat

// Stat is one reading of a process.
type Stat struct {
	RSSBytes int64 // resident set size
	Threads  int64 // kernel threads (tasks) of the process
	OpenFDs  int64 // open file descriptors
}

// Add returns s with o's figures added: the sum over several processes
// (a run's children).
func (s Stat) Add(o Stat) Stat {
	return Stat{RSSBytes: s.RSSBytes + o.RSSBytes, Threads: s.Threads + o.Threads, OpenFDs: s.OpenFDs + o.OpenFDs}
}
