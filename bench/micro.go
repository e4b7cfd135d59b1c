package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// microPkgs are the packages of the per-request hot path.
var microPkgs = []string{"./internal/wire", "./internal/pending", "./internal/stats", "./internal/engine"}

// runMicro runs the Go micro-benchmarks of the hot path.
func (s *suite) runMicro(ctx context.Context) {
	argv := []string{"go", "test", "-run", "^$", "-bench", ".", "-benchmem"}
	if s.opt.quick {
		argv = append(argv, "-benchtime", "100ms")
	}
	argv = append(argv, microPkgs...)
	spec := cmdSpec{Argv: argv, Dir: s.root, CPU: -1, Timeout: 8 * time.Minute}
	s.microCmd = s.display(spec)
	s.logf("running the Go micro-benchmarks of the hot path")
	co, err := s.run(ctx, spec)
	s.micro = parseGoBench(co.Stdout)
	switch {
	case err != nil:
		s.microErr = firstLine(err.Error())
	case len(s.micro) == 0:
		s.microErr = "no benchmark lines in its output: " + tail(strings.TrimSpace(co.Stdout+"\n"+co.Stderr), 300)
	}
	if s.microErr != "" {
		s.logf("micro-benchmarks: %s", s.microErr)
	}
	fmt.Fprintf(s.stdout, "\n== Go micro-benchmarks\n%s", microTable(s.micro).text())
}

// microTable lists benchmarks with ns/op, B/op, allocs/op and any other
// metric they report.
func microTable(bs []goBench) table {
	t := table{Head: []string{"package", "benchmark", "ns/op", "B/op", "allocs/op", "other"}}
	for _, b := range bs {
		var other []string
		for _, m := range b.Metrics {
			switch m.Unit {
			case "ns/op", "B/op", "allocs/op":
				continue
			}
			other = append(other, fmtNum(m.Value)+" "+m.Unit)
		}
		num := func(unit string) string {
			v := b.metric(unit)
			if math.IsNaN(v) {
				return "n/a"
			}
			return fmtNum(v)
		}
		pkg := strings.TrimPrefix(b.Pkg, "github.com/rpcload/rpcload/")
		t.Rows = append(t.Rows, []string{pkg, b.Name, num("ns/op"), num("B/op"), num("allocs/op"), strings.Join(other, ", ")})
	}
	return t
}
