package gen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rows renders every row of f as a whole-row object, and each cell.
func rows(t *testing.T, f *Feeder) (objects []string, cells [][]string) {
	t.Helper()
	for r := range f.Len() {
		obj := string(f.appendRow(nil, r))
		if !json.Valid([]byte(obj)) {
			t.Fatalf("row %d: invalid JSON %s", r, obj)
		}
		objects = append(objects, obj)
		var row []string
		for c := range f.cols {
			row = append(row, string(f.appendCell(nil, r, c)))
		}
		cells = append(cells, row)
	}
	return objects, cells
}

func TestCSV(t *testing.T) {
	cases := []struct {
		name, file string
		cols       []string
		objects    []string
	}{
		{"basic", "a,b\n1,x\n2,y\n", []string{"a", "b"}, []string{`{"a":1,"b":"x"}`, `{"a":2,"b":"y"}`}},
		{"quoted commas and quotes", "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n", []string{"a", "b"}, []string{`{"a":"x,y","b":"say \"hi\""}`}},
		{"BOM", "\ufeffname\nbob\n", []string{"name"}, []string{`{"name":"bob"}`}},
		{"CRLF", "a,b\r\n1,2\r\n3,4\r\n", []string{"a", "b"}, []string{`{"a":1,"b":2}`, `{"a":3,"b":4}`}},
		{"blank trailing lines", "a\n1\n\n\n", []string{"a"}, []string{`{"a":1}`}},
		{"no final newline", "a\n1", []string{"a"}, []string{`{"a":1}`}},
		{"newline in a quoted field", "a\n\"l1\nl2\"\n", []string{"a"}, []string{`{"a":"l1\nl2"}`}},
		{"a non-number makes the column strings", "n\n1\nabc\n2.5\n", []string{"n"}, []string{`{"n":"1"}`, `{"n":"abc"}`, `{"n":"2.5"}`}},
		{"JSON numbers only", "n,m\n-1.5e3,007\n0,+1\n", []string{"n", "m"}, []string{`{"n":-1.5e3,"m":"007"}`, `{"n":0,"m":"+1"}`}},
		{"empty cell is a string", "a,b\n1,\n2,3\n", []string{"a", "b"}, []string{`{"a":1,"b":""}`, `{"a":2,"b":"3"}`}},
		{"control characters escaped", "a\n\"x\ty\"\n", []string{"a"}, []string{`{"a":"x\ty"}`}},
		{"unicode header", "адрес\n1\n", []string{"адрес"}, []string{`{"адрес":1}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := mustLoad(t, "f.csv", tc.file, "")
			if got := f.Columns(); !slices.Equal(got, tc.cols) {
				t.Fatalf("Columns() = %q, want %q", got, tc.cols)
			}
			if f.Len() != len(tc.objects) {
				t.Fatalf("Len() = %d, want %d", f.Len(), len(tc.objects))
			}
			if got, _ := rows(t, f); !slices.Equal(got, tc.objects) {
				t.Fatalf("rows %q, want %q", got, tc.objects)
			}
		})
	}
}

func TestJSONL(t *testing.T) {
	cases := []struct {
		name, file string
		cols       []string
		objects    []string
		cells      [][]string
	}{
		{"union of keys, first seen order", `{"b":1,"a":"x"}` + "\n" + `{"c":[1, 2],"a":null}` + "\n",
			[]string{"b", "a", "c"}, []string{`{"b":1,"a":"x"}`, `{"a":null,"c":[1,2]}`},
			[][]string{{`1`, `"x"`, `null`}, {`null`, `null`, `[1,2]`}}},
		{"BOM, CRLF, blank lines", "\ufeff{\"a\":1}\r\n\r\n  \n{\"a\":2}\r\n\n", []string{"a"}, []string{`{"a":1}`, `{"a":2}`}, nil},
		{"nested values compacted, escapes kept", `{ "o" : { "k" : [ true , "\u00e9\n" ] } }`, []string{"o"}, []string{`{"o":{"k":[true,"\u00e9\n"]}}`}, nil},
		{"empty object", "{}\n{\"a\":1}\n", []string{"a"}, []string{`{}`, `{"a":1}`}, [][]string{{`null`}, {`1`}}},
		{"big numbers kept exact", `{"n":123456789012345678901234567890}`, []string{"n"}, []string{`{"n":123456789012345678901234567890}`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := mustLoad(t, "f.jsonl", tc.file, "")
			if got := f.Columns(); !slices.Equal(got, tc.cols) {
				t.Fatalf("Columns() = %q, want %q", got, tc.cols)
			}
			objects, cells := rows(t, f)
			if !slices.Equal(objects, tc.objects) {
				t.Fatalf("rows %q, want %q", objects, tc.objects)
			}
			if tc.cells != nil && fmt.Sprint(cells) != fmt.Sprint(tc.cells) {
				t.Fatalf("cells %q, want %q", cells, tc.cells)
			}
		})
	}
}

func TestFeederErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, file, content, format, mode string
		want                              string // the whole message, with DIR for the directory
	}{
		{"empty csv", "e.csv", "", "", "", "DIR/e.csv: empty file (expected a header line, then rows)"},
		{"header only", "h.csv", "a,b\n", "", "", "DIR/h.csv: a header but no rows"},
		{"header only after BOM and blank line", "h2.csv", "\ufeffa\n\n", "", "", "DIR/h2.csv: a header but no rows"},
		{"wrong field count", "w.csv", "a,b\n1,2\n1,2,3\n", "", "", "DIR/w.csv:3: 3 fields, but the header has 2"},
		{"wrong field count after a multi-line field", "w2.csv", "a,b\n\"x\ny\",2\n1\n", "", "", "DIR/w2.csv:4: 1 fields, but the header has 2"},
		{"bare quote", "q.csv", "a\nx\"y\n", "", "", `DIR/q.csv:2: bare " in non-quoted-field`},
		{"duplicate column", "d.csv", "a,b,a\n1,2,3\n", "", "", `DIR/d.csv:1: column "a" appears twice in the header`},
		{"unnamed column", "u.csv", "a,\n1,2\n", "", "", "DIR/u.csv:1: column 2 of the header has no name"},
		{"empty jsonl", "e.jsonl", "\n  \r\n", "", "", "DIR/e.jsonl: empty file (expected one JSON object per line)"},
		{"jsonl array", "a.jsonl", "{\"a\":1}\n[1]\n", "", "", "DIR/a.jsonl:2: not a JSON object (a JSONL feeder has one object per line)"},
		{"jsonl scalar", "s.ndjson", "\n\n\"x\"\n", "", "", "DIR/s.ndjson:3: not a JSON object (a JSONL feeder has one object per line)"},
		{"jsonl broken", "b.jsonl", "{\"a\":}\n", "", "", "DIR/b.jsonl:1: invalid JSON: invalid character '}' looking for beginning of value"},
		{"jsonl unterminated", "t.jsonl", "{\"a\":1\n", "", "", "DIR/t.jsonl:1: invalid JSON: EOF"},
		{"jsonl two objects", "2.jsonl", "{\"a\":1} {\"a\":2}\n", "", "", "DIR/2.jsonl:1: more after the object (a JSONL feeder has one object per line)"},
		{"jsonl duplicate key", "k.jsonl", "{\"a\":1,\"a\":2}\n", "", "", `DIR/k.jsonl:1: key "a" appears twice`},
		{"jsonl bad UTF-8", "8.jsonl", "{\"a\":\"\xff\"}\n", "", "", "DIR/8.jsonl:1: not valid UTF-8"},
		{"unknown extension", "x.txt", "a\n1\n", "", "", "feeder DIR/x.txt: cannot tell the format from the extension (expected .csv, .jsonl or .ndjson); give the format, csv or jsonl"},
		{"bad format", "x.csv", "a\n1\n", "tsv", "", `feeder DIR/x.csv: unknown format "tsv" (expected csv or jsonl)`},
		{"bad mode", "x.csv", "a\n1\n", "", "shuffle", `feeder DIR/x.csv: unknown mode "shuffle" (expected sequential, random or once)`},
		{"missing file", "", "", "", "", "feeder: open DIR/missing.csv: no such file or directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "missing.csv")
			if tc.file != "" {
				path = filepath.Join(dir, tc.file)
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadFeeder(path, tc.format, tc.mode)
			if want := strings.ReplaceAll(tc.want, "DIR", dir); err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
	if _, err := LoadFeeder(dir, "csv", ""); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory: %v", err)
	}
}

func TestFormatOverridesExtension(t *testing.T) {
	f, err := LoadFeeder(writeFile(t, "rows.txt", `{"a":1}`), "jsonl", "")
	if err != nil || f.Len() != 1 {
		t.Fatalf("%v", err)
	}
	f, err = LoadFeeder(writeFile(t, "ROWS.CSV", "a\n1\n"), "", "")
	if err != nil || f.Len() != 1 {
		t.Fatalf("upper-case extension: %v", err)
	}
}

func TestFeederLimits(t *testing.T) {
	lim := feedLimits{bytes: 64, rows: 3, columns: 2, cells: 5, data: 10}
	cases := []struct{ name, file, want string }{
		{"bytes", "big.csv", "feeder DIR/big.csv: the file is over 64 bytes, the limit for a feeder"},
		{"rows", "rows.csv", "DIR/rows.csv:5: more than 3 rows, the limit for a feeder"},
		{"columns", "cols.jsonl", "DIR/cols.jsonl:2: more than 2 columns, the limit for a feeder"},
		{"cells", "cells.jsonl", "DIR/cells.jsonl:3: more than 5 cells, the limit for a feeder"},
		{"data", "data.csv", "DIR/data.csv:2: the cells take more than 10 bytes as JSON, the limit for a feeder"},
	}
	content := map[string]string{
		"big.csv":     "a\n" + strings.Repeat("1\n", 40),
		"rows.csv":    "a\n1\n2\n3\n4\n",
		"cols.jsonl":  "{\"a\":1,\"b\":2}\n{\"c\":3}\n",
		"cells.jsonl": "{\"a\":1,\"b\":2}\n{\"a\":1,\"b\":2}\n{\"a\":1,\"b\":2}\n",
		"data.csv":    "a\n\"\x01\x02\"\n",
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, []byte(content[tc.file]), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadFeeder(path, "", "", lim)
			if want := strings.ReplaceAll(tc.want, "DIR", dir); err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
	if defaultLimits.bytes != 256<<20 || defaultLimits.rows != 10_000_000 {
		t.Fatalf("default limits changed: %+v", defaultLimits)
	}
}

// TestSameRow: every $feed of one feeder in one template reads the same row
// for a seq, in every mode, including across a $choice branch.
func TestSameRow(t *testing.T) {
	for _, mode := range []string{"sequential", "random", "once"} {
		t.Run(mode, func(t *testing.T) {
			feeders := map[string]*Feeder{
				"addrs": mustLoad(t, "addrs.csv", addrsCSV, mode),
				"other": mustLoad(t, "o.jsonl", "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n", "random"),
			}
			tmpl := mustCompile(t, decode(t, `[{"$feed":"addrs.address"},{"$int":[0,9]},{"$feed":"other.n"},
				{"$choice":[{"$feed":"addrs.balance"},{"$feed":"addrs.balance"}]},{"$feed":"addrs"}]`), feeders)
			rowsSeen := map[string]bool{}
			for seq := uint64(1); seq <= 5; seq++ {
				var v []any
				if err := json.Unmarshal(gen(t, tmpl, 9, seq), &v); err != nil {
					t.Fatal(err)
				}
				addr, bal := v[0].(string), v[3].(float64)
				if !strings.HasSuffix(addr, fmt.Sprint(bal)) {
					t.Fatalf("seq %d: address %s with balance %v: different rows", seq, addr, bal)
				}
				row := v[4].(map[string]any)
				if row["address"] != addr || row["balance"] != bal {
					t.Fatalf("seq %d: whole row %v, cells %s %v", seq, row, addr, bal)
				}
				if mode != "random" && addr != fmt.Sprintf("0x%040d", seq) {
					t.Fatalf("seq %d: row %s, want row %d", seq, addr, seq-1)
				}
				rowsSeen[addr] = true
			}
			if mode != "random" && len(rowsSeen) != 5 {
				t.Fatalf("rows %v", rowsSeen)
			}
		})
	}
}

func TestSequentialWraps(t *testing.T) {
	f := mustLoad(t, "n.csv", "n\n10\n20\n30\n", "sequential")
	tmpl := mustCompile(t, decode(t, `{"$feed":"f.n"}`), map[string]*Feeder{"f": f})
	var got []string
	for seq := uint64(1); seq <= 7; seq++ {
		got = append(got, string(gen(t, tmpl, 0, seq)))
	}
	if want := "10 20 30 10 20 30 10"; strings.Join(got, " ") != want {
		t.Fatalf("%v, want %s", got, want)
	}
}

func TestRandomModeCoversRows(t *testing.T) {
	f := mustLoad(t, "n.csv", "n\n1\n2\n3\n", "random")
	tmpl := mustCompile(t, decode(t, `{"$feed":"f.n"}`), map[string]*Feeder{"f": f})
	seen := map[string]int{}
	for seq := uint64(1); seq <= 300; seq++ {
		seen[string(gen(t, tmpl, 5, seq))]++
	}
	if len(seen) != 3 || seen["1"] < 60 {
		t.Fatalf("%v", seen)
	}
}

func TestOnceExhausts(t *testing.T) {
	f := mustLoad(t, "n.csv", "n\n1\n2\n", "once")
	tmpl := mustCompile(t, decode(t, `["x",{"$feed":"f.n"}]`), map[string]*Feeder{"f": f})
	if got := string(gen(t, tmpl, 0, 2)); got != `["x",2]` {
		t.Fatalf("seq 2: %s", got)
	}
	dst := []byte("prefix")
	for _, seq := range []uint64{3, 1000, 0} {
		out, ok := tmpl.Append(dst, newRand(0, seq), seq)
		if ok || string(out) != "prefix" {
			t.Fatalf("seq %d: %q, %v; want the buffer unchanged and false", seq, out, ok)
		}
	}
}

func TestColumnsIsACopy(t *testing.T) {
	f := mustLoad(t, "a.csv", "a\n1\n", "")
	f.Columns()[0] = "changed"
	if f.Columns()[0] != "a" {
		t.Fatal("Columns() shares the feeder's slice")
	}
}
