package oracle

import (
	"strings"

	"github.com/rpcload/rpcload/internal/check"
)

func set(rules ...check.Rule) check.Set {
	var s check.Set
	for _, r := range rules {
		s = s.Add(r)
	}
	return s
}

// names spells a rule set for test messages.
func names(s check.Set) string {
	var n []string
	for r := check.Rule(0); r < check.NumRules; r++ {
		if s.Has(r) {
			n = append(n, r.String())
		}
	}
	return "{" + strings.Join(n, ",") + "}"
}

// envelopeRules are the rules check.Envelope may return (check's own tests
// hold Envelope to the same set).
var envelopeRules = check.Set(0).Add(check.InvalidJSON).Add(check.BothResultAndError).Add(check.NoResultOrError).
	Add(check.BadJSONRPCVersion).Add(check.BadErrorObject).Add(check.InvalidEnvelope)
