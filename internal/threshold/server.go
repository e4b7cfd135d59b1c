package threshold

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/stats"
)

// serverPrefix starts the figures of the server's gauges judged by a soak:
// server.NAME.STAT, NAME being a gauge as the soak names it (bare, or
// double-quoted when it has labels: server."x{a=\"b\"}".per_request).
const serverPrefix = "server."

// gaugePlaceholder stands for the gauge in the figures' names.
const gaugePlaceholder = "NAME"

// serverPerRequest is the figure that takes the fate label.
const serverPerRequest = serverPrefix + gaugePlaceholder + ".per_request"

// fateNames are the values of the fate label (soak's fates).
var fateNames = []string{"ok", "error", "timed_out", "lost"}

func init() {
	gaugeOf := func(s *scope) (*stats.GaugeGrowth, string) {
		if s.res.Soak == nil {
			return nil, "the result has no soak (--soak)"
		}
		var names []string
		for i, g := range s.res.Soak.Gauges {
			if g.Name == s.gauge {
				return &s.res.Soak.Gauges[i], ""
			}
			names = append(names, g.Name)
		}
		if len(names) == 0 {
			return nil, "the soak read no server gauge (--server-metrics, --server-pid, or a child process)"
		}
		return nil, fmt.Sprintf("the soak has no gauge %s (it has %s)", s.gauge, strings.Join(names, ", "))
	}
	fitted := func(s *scope) (*stats.GaugeGrowth, string) {
		g, why := gaugeOf(s)
		if why == "" && g.PerRequest == nil {
			return nil, g.Line
		}
		return g, why
	}
	add(figureDef{Figure{serverPerRequest, "", false,
		"a server gauge's growth per request settled, fitted over a soak's load (`{fate=ok|error|timed_out|lost}`: that fate's share, where the run could split it)"}, kindNumber,
		func(s *scope) (float64, string) {
			g, why := fitted(s)
			if why != "" {
				return 0, why
			}
			if s.fate == "" {
				return g.PerRequest.Slope, ""
			}
			for _, f := range g.PerRequest.Fates {
				if f.Fate == s.fate {
					return f.Slope, ""
				}
			}
			note := g.PerRequest.FateNote
			if note == "" {
				note = "no request ended " + s.fate
			}
			return 0, "no split by fate: " + note
		}})
	add(figureDef{Figure{serverPrefix + gaugePlaceholder + ".per_hour", "", false, "a server gauge's growth per hour over a soak's load"}, kindNumber,
		func(s *scope) (float64, string) {
			g, why := gaugeOf(s)
			if why == "" && g.PerHour == nil {
				return 0, g.Line
			}
			if why != "" {
				return 0, why
			}
			return g.PerHour.PerHour, ""
		}})
	add(figureDef{Figure{serverPrefix + gaugePlaceholder + ".r2", "", false, "R² of a server gauge's line against requests"}, kindFraction,
		func(s *scope) (float64, string) {
			g, why := fitted(s)
			if why != "" {
				return 0, why
			}
			return g.PerRequest.R2, ""
		}})
	add(figureDef{Figure{serverPrefix + gaugePlaceholder + ".quiet_kept", "", false, "the share of a server gauge's growth still there in the soak's quiet phase"}, kindFraction,
		func(s *scope) (float64, string) {
			g, why := gaugeOf(s)
			switch {
			case why != "":
				return 0, why
			case g.Quiet == nil:
				return 0, "the soak had no quiet phase (--soak-quiet)"
			case g.Quiet.Kept == nil:
				return 0, s.gauge + " did not grow"
			}
			return *g.Quiet.Kept, ""
		}})
	add(figureDef{Figure{"soak_leaks", "", false, "the server gauges a soak judged a leak"}, kindCount,
		func(s *scope) (float64, string) {
			if s.res.Soak == nil {
				return 0, "the result has no soak (--soak)"
			}
			return float64(s.res.Soak.Leaks), ""
		}})
}

// serverOperand reads server.NAME.STAT (the prefix not yet read).
func (p *parser) serverOperand() (operand, *figureDef, error) {
	p.pos += len(serverPrefix)
	gaugePos := p.pos
	var gauge string
	if p.peek() == '"' {
		q, err := strconv.QuotedPrefix(p.src[p.pos:])
		if err != nil {
			return operand{}, nil, p.errorf(p.pos, "unterminated or malformed quoted gauge name")
		}
		gauge, _ = strconv.Unquote(q)
		p.pos += len(q)
	} else {
		for p.pos < len(p.src) && isGaugeByte(p.src[p.pos]) {
			p.pos++
		}
		gauge = p.src[gaugePos:p.pos]
	}
	if gauge == "" {
		return operand{}, nil, p.errorf(gaugePos, "expected a gauge after server., such as server.go_goroutines.per_request (quote a name with labels)")
	}
	statPos := p.pos
	if !p.eat('.') {
		return operand{}, nil, p.errorf(p.pos, "expected .per_request, .per_hour, .r2 or .quiet_kept after the gauge %s", gauge)
	}
	for p.pos < len(p.src) && (isLetter(p.src[p.pos]) || isDigit(p.src[p.pos]) || p.src[p.pos] == '_') {
		p.pos++
	}
	name := serverPrefix + gaugePlaceholder + p.src[statPos:p.pos]
	i, ok := figureIndex[name]
	if !ok {
		return operand{}, nil, p.errorf(statPos+1, "unknown figure of a server gauge %q; they are per_request, per_hour, r2 and quiet_kept", p.src[statPos+1:p.pos])
	}
	def := &figureDefs[i]
	o := operand{figure: def.Name, gauge: gauge}
	p.space()
	if p.eat('{') {
		if err := p.labels(&o, def); err != nil {
			return o, nil, err
		}
	}
	return o, def, nil
}

// isGaugeByte reports whether c may appear in a bare gauge name: a
// Prometheus metric name's characters.
func isGaugeByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == ':' }

// gaugeText writes a gauge name as an expression holds it: bare when it
// reads back bare, else quoted.
func gaugeText(g string) string {
	if g != "" && !slices.ContainsFunc([]byte(g), func(c byte) bool { return !isGaugeByte(c) }) {
		return g
	}
	return strconv.Quote(g)
}
