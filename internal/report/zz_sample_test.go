package report

import (
	"os"
	"testing"
)

func TestZZWriteSample(t *testing.T) {
	a := capacityResult(capacityFixture())
	os.WriteFile("/tmp/rpcload-capacity-report.html", []byte(render(t, Input{Name: "capacity.json", Result: a})), 0o644)
	b := capacityFixture()
	for i := range b.Steps {
		b.Steps[i].Offered *= 1.3
		b.Steps[i].Achieved *= 1.3
	}
	b.Rate *= 1.3
	os.WriteFile("/tmp/rpcload-capacity-overlay.html", []byte(render(t, Input{Name: "before.json", Result: a}, Input{Name: "after.json", Result: capacityResult(b)})), 0o644)
}
