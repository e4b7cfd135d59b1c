package rounds

import (
	"encoding/json"
	"fmt"

	"github.com/rpcload/rpcload/internal/stats"
)

// FileSchema is the version tag of a comparison file.
const FileSchema = "rpcload.rounds/v1"

// File is what -o FILE holds after a comparison in rounds: the comparison
// itself (every run with its figures, the ratios, the verdicts; the
// members of stats.RoundsReport) and where each target's result went.
// It is no result file: "rpcload compare" and "check" read the targets'.
type File struct {
	Schema string `json:"schema"`
	// Results names each target's result file (its runs merged), in the
	// order of Targets; "" for a target that never ran.
	Results []string `json:"results"`
	*stats.RoundsReport
}

// WriteFile writes the comparison rep to path (stats.WriteFileAtomic),
// naming results as the targets' result files.
func WriteFile(path string, rep *stats.RoundsReport, results []string) error {
	data, err := json.MarshalIndent(File{Schema: FileSchema, Results: results, RoundsReport: rep}, "", "  ")
	if err != nil {
		return fmt.Errorf("rounds: encoding the comparison: %w", err)
	}
	return stats.WriteFileAtomic(path, append(data, '\n'))
}
