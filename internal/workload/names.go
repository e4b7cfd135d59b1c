package workload

import (
	"fmt"

	"github.com/rpcload/rpcload/internal/workload/scenario"
)

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

// SettingName is Name for a transport or profile setting before the Plan
// is built (the command line checks those against the target first): the
// scenario key, file and line when sc gives the setting whose flag is key
// and the command line (set reports the flags given) does not, else the
// flag.
func SettingName(sc *scenario.Scenario, set func(flag string) bool, key string) string {
	if n, ok := fileName(sc, set, key, fileKeys[key]); ok {
		return n
	}
	return "--" + key
}

// fileName is the name of the setting whose flag is key when sc gives it
// under fileKey and the command line does not.
func fileName(sc *scenario.Scenario, set func(string) bool, key, fileKey string) (string, bool) {
	if sc == nil || fileKey == "" || set != nil && set(key) {
		return "", false
	}
	line, ok := sc.Lines[fileKey]
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s (%s:%d)", fileKey, sc.File, line), true
}
