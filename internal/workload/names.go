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

// fileKeys are the scenario keys of the settings a scenario's transport and
// profile sections give (they are laid into the run outside the Plan, but
// an error about one still names it as written).
var fileKeys = map[string]string{
	"conns": "transport.conns", "framing": "transport.framing", "http2": "transport.http2",
	"insecure": "transport.insecure", "max-frame": "transport.max_frame", "restart": "transport.restart",
	"grace": "transport.grace", "stderr": "transport.stderr",
	"profile": "profile.name", "mcp-era": "profile.mcp_era", "workspace": "profile.workspace", "open": "profile.open",
}

// Name is how the user wrote the setting whose flag is key ("duration",
// "http2"): its scenario key with the file and line where the file gave it
// (load.duration (run.yaml:4)), else its flag (--duration). The engine
// names the transport and profile settings it checks through it too.
func (p *Plan) Name(key string) string {
	if n, ok := p.names[key]; ok {
		return n
	}
	return "--" + key
}
