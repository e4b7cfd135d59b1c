// Package shardhttp is the HTTP protocol between the shards of a
// distributed run and the merge that gathers their results, so that no
// shared volume is needed: each shard (rpcload run --shard i/n
// --serve-result ADDR) serves its state and, once done, its result file
// (Server); the merger (rpcload merge --from ADDR ...) polls every shard,
// fetches each result as it is ready, and fails as soon as a shard fails,
// stops answering or is not reached in time (Gatherer); then it
// acknowledges what it fetched, which lets the shards exit.
//
// The endpoints of a shard:
//
//	GET  /status  200, a Status (JSON)
//	GET  /result  200 with the result file's exact bytes and ETag "sha256-HEX" once the run is done;
//	              503 (Retry-After) while it runs; 409 when it failed; the refusals carry the Status
//	POST /ack     the merger has the result (If-Match: its ETag) or has seen the failure: 204;
//	              412 for another ETag, 409 while the run goes on
package shardhttp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// State is where a shard's run stands.
type State string

// The states of a shard's run. A run that finished with a result is Done,
// whatever its findings (rpcload run's exit codes 0 and 1); any other end
// (a usage error, an unreachable target, an interrupt, exit 2, 3 or 130)
// is Failed, with the exit code and the error.
const (
	Running State = "running"
	Done    State = "done"
	Failed  State = "failed"
)

// Status is what GET /status answers, and the body of the refusals of
// /result and /ack.
type Status struct {
	Shard    string `json:"shard,omitempty"` // "i/n" as given to --shard; "" for a run without it
	State    State  `json:"state"`
	ExitCode *int   `json:"exit_code,omitempty"` // the run's exit code, once it ended
	Error    string `json:"error,omitempty"`     // why a failed run failed
}

// Paths of the protocol, under the shard's base URL.
const (
	StatusPath = "/status"
	ResultPath = "/result"
	AckPath    = "/ack"
)

// ETag is the entity tag of a result: its SHA-256, so the merger can tell
// a whole body from a cut one, and acknowledge exactly what it has.
func ETag(data []byte) string {
	sum := sha256.Sum256(data)
	return `"sha256-` + hex.EncodeToString(sum[:]) + `"`
}

// ParseShard reads "i/n" as a Status gives it.
func ParseShard(s string) (index, count int, err error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || index < 1 || index > count {
		return 0, 0, fmt.Errorf("shard %q is not i/n with 1 <= i <= n", s)
	}
	return index, count, nil
}

// describe names a source in messages: "shard 2/3 at ADDR" once it has
// said which shard it is, else "the shard at ADDR".
func describe(shard, source string) string {
	if shard == "" {
		return "the shard at " + source
	}
	return "shard " + shard + " at " + source
}
