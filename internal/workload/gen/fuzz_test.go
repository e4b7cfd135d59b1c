package gen

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// fuzzFeeders gives FuzzCompile something for $feed to find: a CSV feeder
// with a string and a number column, and a JSONL one whose rows differ in
// keys (so cells can be missing).
func fuzzFeeders(t testing.TB) map[string]*Feeder {
	csvF, err := parseFeeder("a.csv", []byte("address,n\n0xab,1\n\"q\"\"\",2\n"), true, defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	jsonlF, err := parseFeeder("b.jsonl", []byte("{\"x\":[1,{\"y\":null}]}\n{\"z\":\"\\u2028\"}\n"), false, defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	jsonlF.mode = modeOnce
	return map[string]*Feeder{"a": csvF, "b": jsonlF}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		`null`, `[1,"a",true,{"b":[]}]`, `{"$$x":1,"y":{"$seq":{}}}`,
		`{"$int":[-5,5]}`, `{"$int":[-9223372036854775808,9223372036854775807]}`, `{"$float":[0,1e308]}`,
		`{"$string":{"min":0,"max":5,"alphabet":"é\"\\\u0000"}}`, `{"$string":3}`,
		`{"$choice":[1,{"$uuid":"v4"},[{"$hex":3}]]}`, `{"$weighted":[{"weight":0,"value":1},{"weight":0.5,"value":{"$seq":7}}]}`,
		`{"$hexint":["0x0","0xffffffffffffffff"]}`, `{"$now":"rfc3339"}`, `{"$now":"unixns"}`,
		`[{"$feed":"a.address"},{"$feed":"a.n"},{"$feed":"a"},{"$feed":"b.x"},{"$feed":"b.z"},{"$feed":"b"}]`,
		`{"$int":[2,1]}`, `{"$foo":1}`, `{"$int":[1,2],"a":3}`, `{"$seq":{"start":1,"step":-9223372036854775808}}`,
	} {
		f.Add([]byte(s), uint64(1), uint64(1))
	}
	feeders := fuzzFeeders(f)
	f.Fuzz(func(t *testing.T, data []byte, seed, seq uint64) {
		// Both decodings a scenario can arrive in: float64 and json.Number.
		for _, useNumber := range []bool{false, true} {
			d := json.NewDecoder(bytes.NewReader(data))
			if useNumber {
				d.UseNumber()
			}
			var v any
			if d.Decode(&v) != nil {
				return
			}
			tmpl, err := Compile(v, feeders)
			if err != nil {
				if _, ok := err.(*CompileError); !ok {
					if _, ok := err.(interface{ Unwrap() []error }); !ok {
						t.Fatalf("error of type %T: %v", err, err)
					}
				}
				continue
			}
			tmpl.SetClock(func() time.Time { return time.Unix(int64(seed), int64(seq)) })
			out, ok := tmpl.Append(nil, newRand(seed, seq), seq)
			if !ok {
				continue // the once feeder ran out
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON %q from %s", out, data)
			}
			if again, _ := tmpl.Append(nil, newRand(seed, seq), seq); !bytes.Equal(out, again) {
				t.Fatalf("not reproducible: %s then %s", out, again)
			}
			if static, isStatic := tmpl.Static(); isStatic && !bytes.Equal(static, out) {
				t.Fatalf("Static() %s but Append %s", static, out)
			}
		}
	})
}

func FuzzLoadFeeder(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n", "a\n\"x,\"\"y\"\"\"\n\n", "\ufeffa,b\r\n1,2\r\n", "a,b\n1\n", "a\n", "",
		"{\"a\":1}\n{\"b\":[1,2]}\n", "{\"a\":1,\"a\":2}\n", "[1]\n", "{\"a\":1} x\n", "\ufeff{}\r\n\r\n",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	// Small limits so the fuzzer reaches them; the real ones are the same code.
	lim := feedLimits{bytes: 1 << 20, rows: 50, columns: 20, cells: 200, data: 4096}
	f.Fuzz(func(t *testing.T, data []byte, isCSV bool) {
		fd, err := parseFeeder("f", data, isCSV, lim)
		if err != nil {
			return
		}
		if fd.Len() == 0 || fd.Len() > lim.rows || len(fd.cols) > lim.columns {
			t.Fatalf("%d rows, %d columns", fd.Len(), len(fd.cols))
		}
		for r := range fd.Len() {
			if row := fd.appendRow(nil, r); !json.Valid(row) {
				t.Fatalf("row %d: invalid JSON %q", r, row)
			}
			for c := range fd.cols {
				if cell := fd.appendCell(nil, r, c); !json.Valid(cell) {
					t.Fatalf("row %d column %d: invalid JSON %q", r, c, cell)
				}
			}
		}
	})
}
