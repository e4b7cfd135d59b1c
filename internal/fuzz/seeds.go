package fuzz

import (
	"encoding/json"

	"github.com/rpcload/rpcload/corpus"
	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/wire"
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

// mutationEnv is what the ops may draw on: the seeds' methods and frames,
// the framing to break, the size bound, and the params schemas of the API's
// plain methods (api may be nil).
func mutationEnv(cfg *Config, seeds []mutate.Case, api *apiRules) *mutate.Env {
	env := &mutate.Env{MaxFrame: cfg.MaxFrame, Profile: string(cfg.Profile), Framing: MutationFraming(cfg.Target)}
	if api != nil {
		for _, m := range api.api.Methods {
			if m.Kind == apispec.Plain && m.Params != nil {
				if env.Params == nil {
					env.Params = map[string]json.RawMessage{}
				}
				env.Params[m.Call] = m.Params
			}
		}
	}
	seen := map[string]bool{}
	var m wire.Message
	for _, s := range seeds {
		for _, f := range s.Frames {
			env.Corpus = append(env.Corpus, f)
			wire.Scan(f, &m)
			if name, ok := wire.Unquote(nil, m.Method); ok && m.Method != nil && !seen[string(name)] {
				seen[string(name)] = true
				env.Methods = append(env.Methods, string(name))
			}
		}
	}
	return env
}
