package workload

// The settings of a plan, by the name of their flag. An error names a
// setting as the user wrote it: its flag (--duration) when it came from the
// command line or a default, its key in the scenario file (load.duration,
// with the file and line) when it came from there.
const (
	keyRate        = "rate"
	keyConcurrency = "concurrency"
	keyMaxRate     = "max-rate"
	keyDuration    = "duration"
	keyTimeout     = "timeout"
	keyDrain       = "drain"
	keyMaxInFlight = "max-inflight"
	keyMethod      = "method"
	keyParams      = "params"
	keyNotifyEvery = "notify-every"
	keyBatch       = "batch"
	keyShard       = "shard"
	keyStartAt     = "start-at"
	keyIDFormat    = "id-format"
	keyArrival     = "arrival"
	keySeed        = "seed"
)

// name is how the user wrote setting key: its scenario key where the file
// gave it, else its flag.
func (p *Plan) name(key string) string {
	if n, ok := p.names[key]; ok {
		return n
	}
	return "--" + key
}
