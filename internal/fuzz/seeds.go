package fuzz

import (
	"github.com/rpcload/rpcload/corpus"
	"github.com/rpcload/rpcload/internal/mutate"
)

// shippedSeeds are the corpus's seeds for a profile: the JSON-RPC ones and
// the profile's own.
func shippedSeeds(profile string) []mutate.Case {
	var out []mutate.Case
	for _, s := range corpus.Seeds(profile) {
		if len(s.Frames) > 0 {
			out = append(out, mutate.Case{Frames: s.Frames})
		}
	}
	return out
}
