package stats

import "strings"

// ShardInfo says which part of a sharded run a result is: --shard i/n.
type ShardInfo struct {
	Index int `json:"index"` // 1-based, as given
	Count int `json:"count"`
}

// MergedPart names one result that went into a merged result.
type MergedPart struct {
	Path      string     `json:"path"`
	Target    string     `json:"target"`
	StartedAt string     `json:"started_at"`
	Shard     *ShardInfo `json:"shard,omitempty"`
}

// Partial marks a merged result that lacks part of its run: shards that
// were not given, or whose result did not come (rpcload merge
// --allow-missing). Its figures are those of the shards in merged_from.
type Partial struct {
	Missing []string `json:"missing,omitempty"` // the shards absent, as "2/3"
	// Reasons says, one line each, why a result did not come: a shard
	// that failed (with its exit code and error), stopped answering or was
	// never reached.
	Reasons []string `json:"reasons,omitempty"`
}

// Text is the partial merge in a few words, for reports and warnings:
// "shards 2/3, 3/3 missing", or the first reason when no shard is known
// to be missing.
func (p *Partial) Text() string {
	switch {
	case len(p.Missing) == 1:
		return "shard " + p.Missing[0] + " missing"
	case len(p.Missing) > 1:
		return "shards " + strings.Join(p.Missing, ", ") + " missing"
	case len(p.Reasons) > 0:
		return p.Reasons[0]
	}
	return "partial"
}
