package stats

// DiffReport counts requests whose results differed between two targets
// (--diff): the same generated request sent to both, the replies compared as
// canonical JSON.
type DiffReport struct {
	Targets     []string              `json:"targets"`
	IgnorePaths []string              `json:"ignore_paths"`
	Compared    uint64                `json:"compared"`
	Mismatches  uint64                `json:"mismatches"`
	Methods     map[string]DiffMethod `json:"methods"`
	Samples     []DiffSample          `json:"samples"`
}

// DiffMethod is the per-method part of a DiffReport.
type DiffMethod struct {
	Compared   uint64 `json:"compared"`
	Mismatches uint64 `json:"mismatches"`
}

// DiffSample is one mismatch kept as an example.
type DiffSample struct {
	Method  string   `json:"method"`
	Request string   `json:"request"`
	A       string   `json:"a"`
	B       string   `json:"b"`
	Paths   []string `json:"paths"` // where the canonical forms differ
}
