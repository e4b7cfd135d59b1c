package main

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/workload/scenario"
)

// scenarioExamples is how many params each scenario call's template
// renders as examples of its method.
const scenarioExamples = 4

// scenarioAPI reads a scenario file's calls as methods of the API (-f):
// each request call's method, with its params template (rendered anew for
// each call, as the load renders it) and a few params it renders as
// examples (for tools/call, the template of the arguments is not taken:
// only the examples, by tool), and
// its expect.result schema, when it has one, as the result's. Raw and
// mutated calls and notifications are left out: the first are malformed
// on purpose, and a notification gets no reply to judge.
func scenarioAPI(path string) (*apispec.API, error) {
	sc, err := scenario.Load(path, os.LookupEnv)
	if err != nil {
		return nil, cli.Usagef("-f: %v", err)
	}
	api := &apispec.API{}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, c := range sc.Mix {
		if c.Raw != nil || c.Mutate != nil || c.Notify {
			continue
		}
		for seq := range uint64(scenarioExamples) {
			var params []byte
			if c.Params != nil {
				p, ok := c.Params.Append(nil, rnd, seq+1)
				if !ok {
					break // the call's data ran out
				}
				params = p
			}
			m, err := apispec.Seed(c.Method, params)
			if err != nil {
				return nil, cli.Usagef("-f %s: call %s: %v", path, c.Name, err)
			}
			m.Source, m.Result = "scenario", c.Expect.ResultSchemaJSON
			if c.Params != nil && m.Kind == apispec.Plain {
				m.Template = c.Params
			}
			if err := api.Add(m); err != nil {
				return nil, fmt.Errorf("-f %s: %w", path, err)
			}
		}
	}
	return api, nil
}
