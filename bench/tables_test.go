package main

import (
	"math"
	"strings"
	"testing"
)

var nan = math.NaN()

func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, nan},
		{"one", []float64{7}, 7},
		{"odd, unsorted", []float64{3, 1, 2}, 2},
		{"even takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"NaN rounds are left out", []float64{nan, 5, 1, nan, 3}, 3},
		{"all NaN", []float64{nan, nan}, nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.in); !sameFloat(got, tc.want) {
				t.Fatalf("median(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestPairedRatio(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"per-round ratios, then the median", []float64{100, 200, 300}, []float64{50, 50, 100}, 3},
		{"drift cancels within a round", []float64{80, 40, 120}, []float64{100, 50, 150}, 0.8},
		{"a round missing on one side is skipped", []float64{10, nan, 30}, []float64{10, 10, 10}, 2},
		{"shorter side bounds the rounds", []float64{10, 20, 30}, []float64{10}, 1},
		{"zero denominators are skipped", []float64{10, 20}, []float64{0, 10}, 2},
		{"nothing in common", []float64{nan}, []float64{1}, nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pairedRatio(tc.a, tc.b); !sameFloat(got, tc.want) {
				t.Fatalf("pairedRatio = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{90, 100, 110}, 0.2},
		{[]float64{100}, nan},
		{[]float64{100, nan, 100}, 0},
	} {
		if got := spread(tc.in); !sameFloat(got, tc.want) {
			t.Errorf("spread(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// sampleStore is two tools over three rounds, with one round of one tool
// missing.
func sampleStore() *store {
	var s store
	add := func(tool string, round int, v float64) {
		s.add(sample{Comparison: 1, Case: "c", Tool: tool, Metric: "req/s", Round: round, Value: v})
	}
	add("rpcload", 1, 100)
	add("wrk", 1, 120)
	add("rpcload", 2, 90)
	add("wrk", 2, 100)
	add("rpcload", 3, 110)
	s.add(sample{Comparison: 2, Case: "c", Tool: "wrk", Metric: "req/s", Round: 3, Value: 1}) // another comparison
	return &s
}

func TestStoreValuesAndRatios(t *testing.T) {
	s := sampleStore()
	got := s.values(seriesKey{1, "c", "wrk", "req/s"})
	if len(got) != 2 || got[0] != 120 || got[1] != 100 {
		t.Fatalf("values(wrk) = %v, want [120 100]", got)
	}
	rows := s.ratios(1, "req/s", "rpcload")
	if len(rows) != 1 {
		t.Fatalf("ratios = %+v, want one row (rpcload / wrk)", rows)
	}
	r := rows[0]
	if r.A != "rpcload" || r.B != "wrk" || !sameFloat(r.Paired, (100.0/120+90.0/100)/2) || !sameFloat(r.OfMedians, 100.0/110) {
		t.Fatalf("ratio row = %+v", r)
	}
}

func TestMediansTable(t *testing.T) {
	tb := sampleStore().mediansTable(1)
	want := [][]string{
		{"c", "rpcload", "req/s", "100", "100, 90, 110", "20.0%"},
		{"c", "wrk", "req/s", "110", "120, 100", "18.2%"},
	}
	if len(tb.Rows) != len(want) {
		t.Fatalf("rows = %v, want %v", tb.Rows, want)
	}
	for i := range want {
		if strings.Join(tb.Rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %v, want %v", i, tb.Rows[i], want[i])
		}
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{fmtNum(229908.52), "229,909"},
		{fmtNum(1234), "1,234"},
		{fmtNum(-1234567), "-1,234,567"},
		{fmtNum(123.456), "123.5"},
		{fmtNum(1.0456), "1.05"},
		{fmtNum(0.1234), "0.123"},
		{fmtNum(0), "0"},
		{fmtNum(7), "7"},
		{fmtNum(nan), "n/a"},
		{fmtRatio(0.8123), "0.81x"},
		{fmtRatio(nan), "n/a"},
		{shellQuote("plain-arg_1.0"), "plain-arg_1.0"},
		{shellQuote(`[1,"a"]`), `'[1,"a"]'`},
		{shellQuote("it's"), `'it'\''s'`},
		{shellQuote(""), "''"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTableRendering(t *testing.T) {
	tb := table{Head: []string{"a", "bb"}, Rows: [][]string{{"x|y", "1"}}}
	if got, want := tb.markdown(), "| a | bb |\n| --- | --- |\n| x\\|y | 1 |\n"; got != want {
		t.Errorf("markdown = %q, want %q", got, want)
	}
	if got, want := tb.text(), "a    bb\nx|y  1\n"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func TestParseOnly(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"1,3", []int{1, 3}, false},
		{" 6 , 2", []int{2, 6}, false},
		{"0", nil, true},
		{"7", []int{7}, false},
		{"8", nil, true},
		{"1,x", nil, true},
	} {
		got, err := parseOnly(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("parseOnly(%q) error = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("parseOnly(%q) = %v, want %v", tc.in, got, tc.want)
		}
		for _, n := range tc.want {
			if !got[n] {
				t.Errorf("parseOnly(%q) lacks %d", tc.in, n)
			}
		}
	}
}
