package stats

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
