package threshold

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/check"
)

func fig(name string) operand { return operand{figure: name} }

var validTests = []struct {
	expr      string
	want      Threshold // src is checked apart
	canonical string    // what String returns
}{
	// The examples of the docs.
	{"p99<50ms", Threshold{left: fig("p99"), op: opLT, lit: 50, unit: "ms"}, "p99<50ms"},
	{"p99{method=eth_call}<20ms", Threshold{left: operand{figure: "p99", method: "eth_call"}, op: opLT, lit: 20, unit: "ms"}, "p99{method=eth_call}<20ms"},
	{"error_rate<0.1%", Threshold{left: fig("error_rate"), op: opLT, lit: 0.1, unit: "%"}, "error_rate<0.1%"},
	{"violations==0", Threshold{left: fig("violations"), op: opEQ}, "violations==0"},
	{"violations{rule=unknown_id}==0", Threshold{left: operand{figure: "violations", rule: "unknown_id"}, op: opEQ}, "violations{rule=unknown_id}==0"},
	{"leaked==0", Threshold{left: fig("leaked"), op: opEQ}, "leaked==0"},
	{"achieved_rate>=0.99*target", Threshold{left: fig("achieved_rate"), op: opGE, factor: 0.99, right: fig("target")}, "achieved_rate>=0.99*target"},
	{"timeouts<=10", Threshold{left: fig("timeouts"), op: opLE, lit: 10}, "timeouts<=10"},
	{"rps>1000", Threshold{left: fig("rps"), op: opGT, lit: 1000}, "rps>1000"},
	{"service_p99<5ms", Threshold{left: fig("service_p99"), op: opLT, lit: 5, unit: "ms"}, "service_p99<5ms"},
	{"p99.9<100ms", Threshold{left: fig("p99.9"), op: opLT, lit: 100, unit: "ms"}, "p99.9<100ms"},
	{"max<1s", Threshold{left: fig("max"), op: opLT, lit: 1, unit: "s"}, "max<1s"},

	// Aliases become the canonical name.
	{"p999<1s", Threshold{left: fig("p99.9"), op: opLT, lit: 1, unit: "s"}, "p99.9<1s"},
	{"lag_p999<=2ms", Threshold{left: fig("lag_p99.9"), op: opLE, lit: 2, unit: "ms"}, "lag_p99.9<=2ms"},
	// Every operator; != and == on fractions.
	{"error_rate!=0", Threshold{left: fig("error_rate"), op: opNE}, "error_rate!=0"},
	{"rpc_error_rate==0.5", Threshold{left: fig("rpc_error_rate"), op: opEQ, lit: 0.5}, "rpc_error_rate==0.5"},
	{"error_rate<=1", Threshold{left: fig("error_rate"), op: opLE, lit: 1}, "error_rate<=1"},
	{"sent>=100", Threshold{left: fig("sent"), op: opGE, lit: 100}, "sent>=100"},
	// Every time unit, both micro signs, numbers in all their forms.
	{"min>1500ns", Threshold{left: fig("min"), op: opGT, lit: 1500, unit: "ns"}, "min>1500ns"},
	{"mean<250us", Threshold{left: fig("mean"), op: opLT, lit: 250, unit: "us"}, "mean<250us"},
	{"p50<1.5µs", Threshold{left: fig("p50"), op: opLT, lit: 1.5, unit: "µs"}, "p50<1.5µs"},
	{"p50<2μs", Threshold{left: fig("p50"), op: opLT, lit: 2, unit: "μs"}, "p50<2μs"},
	{"lag_max<2m", Threshold{left: fig("lag_max"), op: opLT, lit: 2, unit: "m"}, "lag_max<2m"},
	{"service_max<1h", Threshold{left: fig("service_max"), op: opLT, lit: 1, unit: "h"}, "service_max<1h"},
	{"p90<.5s", Threshold{left: fig("p90"), op: opLT, lit: 0.5, unit: "s"}, "p90<0.5s"},
	{"p90<5.s", Threshold{left: fig("p90"), op: opLT, lit: 5, unit: "s"}, "p90<5s"},
	{"rps>1e6", Threshold{left: fig("rps"), op: opGT, lit: 1e6}, "rps>1000000"},
	{"rps>2.5E+3", Threshold{left: fig("rps"), op: opGT, lit: 2500}, "rps>2500"},
	{"error_rate<1e-3", Threshold{left: fig("error_rate"), op: opLT, lit: 0.001}, "error_rate<0.001"},
	// Spaces between tokens, and between a number and its unit.
	{"  p99 {method = eth_call}\t<  5 ms ", Threshold{left: operand{figure: "p99", method: "eth_call"}, op: opLT, lit: 5, unit: "ms"}, "p99{method=eth_call}<5ms"},
	{"p99 < 2 * p50", Threshold{left: fig("p99"), op: opLT, factor: 2, right: fig("p50")}, "p99<2*p50"},
	// Figures on the right: alone (factor 1), with labels, 1* dropped.
	{"achieved_rate>=target", Threshold{left: fig("achieved_rate"), op: opGE, factor: 1, right: fig("target")}, "achieved_rate>=target"},
	{"achieved_rate>=1*target", Threshold{left: fig("achieved_rate"), op: opGE, factor: 1, right: fig("target")}, "achieved_rate>=target"},
	{"p99{method=a}<1.5*p99{method=b}", Threshold{left: operand{figure: "p99", method: "a"}, op: opLT, factor: 1.5, right: operand{figure: "p99", method: "b"}}, "p99{method=a}<1.5*p99{method=b}"},
	{"timeouts<=0.01*sent", Threshold{left: fig("timeouts"), op: opLE, factor: 0.01, right: fig("sent")}, "timeouts<=0.01*sent"},
	// Labels: both, in either order (String puts method first); method
	// names with slashes, dollars, parentheses bare; others quoted.
	{"violations{rule=mcp_bad_id,method=tools/call}==0", Threshold{left: operand{figure: "violations", method: "tools/call", rule: "mcp_bad_id"}, op: opEQ}, "violations{method=tools/call,rule=mcp_bad_id}==0"},
	{"p99{method=$/cancelRequest}<1s", Threshold{left: operand{figure: "p99", method: "$/cancelRequest"}, op: opLT, lit: 1, unit: "s"}, "p99{method=$/cancelRequest}<1s"},
	{"sent{method=(unmatched)}==0", Threshold{left: operand{figure: "sent", method: "(unmatched)"}, op: opEQ}, "sent{method=(unmatched)}==0"},
	{`p99{method="a b,c}"}<1s`, Threshold{left: operand{figure: "p99", method: "a b,c}"}, op: opLT, lit: 1, unit: "s"}, `p99{method="a b,c}"}<1s`},
	{`p99{method="eth_call"}<1s`, Threshold{left: operand{figure: "p99", method: "eth_call"}, op: opLT, lit: 1, unit: "s"}, `p99{method=eth_call}<1s`},
	{`p99{method="\u00e9\x01"}<1s`, Threshold{left: operand{figure: "p99", method: "é\x01"}, op: opLT, lit: 1, unit: "s"}, `p99{method="é\x01"}<1s`},
	{"inflight_max<=1000", Threshold{left: fig("inflight_max"), op: opLE, lit: 1000}, "inflight_max<=1000"},
}

func TestParseValid(t *testing.T) {
	for _, tt := range validTests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := Parse(tt.expr)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.src != tt.expr {
				t.Errorf("source kept as %q", got.src)
			}
			got.src = ""
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if s := got.String(); s != tt.canonical {
				t.Errorf("String() = %q, want %q", s, tt.canonical)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	// The rules as check names them, in its order (the list grows with check).
	var names []string
	for r := range check.NumRules {
		names = append(names, r.String())
	}
	rules := strings.Join(names, ", ")
	if !strings.HasPrefix(rules, "unknown_id, duplicate_reply, ") {
		t.Fatalf("check's rules start %q", rules)
	}
	figures := "p50 p90 p95 p99 p99.9 min mean max rps answered_rate achieved_rate target error_rate rpc_error_rate " +
		"sent answered ok rpc_errors invalid_replies transport_errors timeouts late leaked dropped violations " +
		"inflight_max capacity server.NAME.per_request server.NAME.per_hour server.NAME.r2 server.NAME.quiet_kept soak_leaks (and service_* and lag_* of the latencies)"
	tests := []struct{ expr, want string }{
		{"p99<<5ms", `threshold "p99<<5ms": column 5: expected a number`},
		{"", `threshold "": column 1: expected a figure such as p99 or error_rate`},
		{"<5ms", `threshold "<5ms": column 1: expected a figure such as p99 or error_rate`},
		{"P99<5ms", `threshold "P99<5ms": column 1: unknown figure "P99"; figures are ` + figures},
		{"p98<5ms", `threshold "p98<5ms": column 1: unknown figure "p98"; figures are ` + figures},
		{"p99", `threshold "p99": column 4: expected a comparison: < <= > >= == !=`},
		{"p99=5ms", `threshold "p99=5ms": column 4: expected a comparison: < <= > >= == !=`},
		{"p99=<5ms", `threshold "p99=<5ms": column 4: expected a comparison: < <= > >= == !=`},
		{"p99<", `threshold "p99<": column 5: expected a number`},
		{"p99<-5ms", `threshold "p99<-5ms": column 5: expected a number`},
		{"p99<.ms", `threshold "p99<.ms": column 5: expected a number`},
		// Units that do not fit the figure.
		{"p99<5%", `threshold "p99<5%": column 6: p99 is a duration: use ns, us, µs, ms, s, m or h, not "%"`},
		{"p99<5", `threshold "p99<5": column 6: p99 is a duration: give a unit (ns, us, µs, ms, s, m, h)`},
		{"p99<5msec", `threshold "p99<5msec": column 6: p99 is a duration: use ns, us, µs, ms, s, m or h, not "msec"`},
		{"p99<5e", `threshold "p99<5e": column 6: p99 is a duration: use ns, us, µs, ms, s, m or h, not "e"`},
		{"error_rate<5ms", `threshold "error_rate<5ms": column 13: error_rate is a fraction: use % or a plain number, not "ms"`},
		{"error_rate<5", `threshold "error_rate<5": column 12: error_rate is a fraction: write 5% or a number from 0 to 1`},
		{"rps>1000%", `threshold "rps>1000%": column 9: rps is a rate per second: write a plain number, not "%"`},
		{"timeouts<=10s", `threshold "timeouts<=10s": column 13: timeouts is a count: write a plain number, not "s"`},
		{"rps>1e400", `threshold "rps>1e400": column 5: 1e400 is out of range`},
		{"p99<1e305 h", `threshold "p99<1e305 h": column 5: 1e305 h is out of range`},
		// Labels.
		{"violations{rule=nope}==0", `threshold "violations{rule=nope}==0": column 17: unknown rule "nope"; rules are ` + rules},
		{"p99{rule=unknown_id}<5ms", `threshold "p99{rule=unknown_id}<5ms": column 5: the rule label applies to violations only, not p99`},
		{"target{method=a}>1", `threshold "target{method=a}>1": column 8: target has no per-method value`},
		{"inflight_max{method=a}>1", `threshold "inflight_max{method=a}>1": column 14: inflight_max has no per-method value`},
		{"p99{method=}<5ms", `threshold "p99{method=}<5ms": column 12: expected a method name`},
		{`p99{method=""}<5ms`, `threshold "p99{method=\"\"}<5ms": column 12: expected a method name`},
		{"p99{method=a,method=b}<1s", `threshold "p99{method=a,method=b}<1s": column 14: label method given twice`},
		{"p99{foo=a}<1s", `threshold "p99{foo=a}<1s": column 5: unknown label "foo"; labels are method, rule and fate`},
		{"p99{}<1s", `threshold "p99{}<1s": column 5: expected a label: method=NAME or rule=NAME`},
		{"p99{method a}<1s", `threshold "p99{method a}<1s": column 12: expected = after method`},
		{"p99{method=a<1s", `threshold "p99{method=a<1s": column 16: expected , or } after the label`},
		{"p99{method=a b}<1s", `threshold "p99{method=a b}<1s": column 14: expected , or } after the label`},
		{`p99{method="abc}<1s`, `threshold "p99{method=\"abc}<1s": column 12: unterminated or malformed quoted value`},
		// Right-hand figures.
		{"p99<5ms*p50", `threshold "p99<5ms*p50": column 6: the factor of K*figure takes no unit`},
		{"p99<target", `threshold "p99<target": column 5: p99 is a duration but target is a rate per second: a limit must be of the same kind`},
		{"error_rate<2*timeouts", `threshold "error_rate<2*timeouts": column 14: error_rate is a fraction but timeouts is a count: a limit must be of the same kind`},
		{"rps>0.5*nope", `threshold "rps>0.5*nope": column 9: unknown figure "nope"; figures are ` + figures},
		{"rps>0.5*", `threshold "rps>0.5*": column 9: expected a figure such as p99 or error_rate`},
		{"achieved_rate>=target*0.99", `threshold "achieved_rate>=target*0.99": column 22: unexpected "*0.99" after the limit; a multiple of a figure is written K*figure, as in 0.99*target`},
		// Trailing text; columns count characters, not bytes.
		{"p99<5ms and more", `threshold "p99<5ms and more": column 9: unexpected "and more" after the limit`},
		{"p99<5 and", `threshold "p99<5 and": column 7: p99 is a duration: use ns, us, µs, ms, s, m or h, not "and"`},
		{"rps>1e30000000000", `threshold "rps>1e30000000000": column 5: 1e30000000000 is out of range`},
		{"p99<5ms,", `threshold "p99<5ms,": column 8: unexpected "," after the limit`},
		{"p99{method=é}<5µs x", `threshold "p99{method=é}<5µs x": column 19: unexpected "x" after the limit`},
		{"p99<5ms\n", `threshold "p99<5ms\n": column 8: unexpected "\n" after the limit`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := Parse(tt.expr)
			if err == nil {
				t.Fatalf("parsed as %q, want error %s", got.String(), tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Expr != tt.expr {
				t.Errorf("error %#v is not a ParseError naming the expression", err)
			}
		})
	}
}

// FuzzParse: Parse never panics; an error is a ParseError naming the
// expression and a column inside it (or just past its end); a threshold
// that parses prints to a canonical form that parses to the same
// threshold, and evaluates without panicking to a verdict with a detail.
func FuzzParse(f *testing.F) {
	for _, tt := range validTests {
		f.Add(tt.expr)
	}
	for _, s := range []string{"p99<<5ms", "error_rate<5", `p99{method="\xff"}<1s`, "violations{rule=x}==0",
		"p99<1e305h", "rps>0.5*", "p99{method=a,rule=b}<1", "target>=0*target"} {
		f.Add(s)
	}
	res := sampleResult()
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := Parse(expr)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %v is not a ParseError", expr, err)
			}
			if pe.Expr != expr || pe.Column < 1 || pe.Column > utf8.RuneCountInString(expr)+1 {
				t.Fatalf("%q: error %v has a column outside the expression", expr, err)
			}
			if !strings.HasPrefix(err.Error(), "threshold ") {
				t.Fatalf("%q: error %q does not name the threshold", expr, err)
			}
			return
		}
		s := th.String()
		again, err := Parse(s)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", expr, s, err)
		}
		if again.String() != s {
			t.Fatalf("%q: canonical form %q prints as %q", expr, s, again.String())
		}
		th.src, again.src = "", ""
		if th != again {
			t.Fatalf("%q: canonical form %q parses to %+v, not %+v", expr, s, again, th)
		}
		v := th.Eval(res)
		if v.Detail == "" || v.Figure != th.left.figure {
			t.Fatalf("%q: verdict %+v", expr, v)
		}
	})
}

func TestLatencyBoundAndService(t *testing.T) {
	tests := []struct {
		expr    string
		limitUs float64
		ok      bool
		service string
	}{
		{"p99<20ms", 20000, true, "service_p99<20ms"},
		{"p99.9<=1s", 1e6, true, "service_p99.9<=1s"},
		{"p50{method=get}<500us", 500, true, "service_p50{method=get}<500us"},
		{"mean<2ms", 2000, true, "service_mean<2ms"},
		{"p99>20ms", 0, false, ""},
		{"service_p99<20ms", 0, false, ""},
		{"lag_p99<20ms", 0, false, ""},
		{"p99<2*p50", 0, false, ""},
		{"error_rate<1%", 0, false, ""},
	}
	for _, tt := range tests {
		th, err := Parse(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		limit, ok := th.LatencyBound()
		if ok != tt.ok || limit != tt.limitUs {
			t.Errorf("%s: LatencyBound = %g, %v; want %g, %v", tt.expr, limit, ok, tt.limitUs, tt.ok)
		}
		s, ok := th.Service()
		if ok != tt.ok || ok && s.String() != tt.service {
			t.Errorf("%s: Service = %q, %v; want %q", tt.expr, s.String(), ok, tt.service)
		}
	}
}
