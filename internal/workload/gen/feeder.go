package gen

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// feedLimits bound what a feeder may hold, so a wrong path (a log file, a
// disk image) is refused with a message instead of taking the machine's
// memory. cells bounds the row index (4 bytes a cell): a JSONL file whose
// lines keep adding new keys would otherwise grow it quadratically. data
// bounds the cells as JSON, which escaping can make up to six times the file
// (and keeps offsets within uint32).
type feedLimits struct {
	bytes   int64
	rows    int
	columns int
	cells   int
	data    int
}

var defaultLimits = feedLimits{bytes: 256 << 20, rows: 10_000_000, columns: 4096, cells: 64 << 20, data: 1 << 30}

type feedMode uint8

const (
	modeSequential feedMode = iota
	modeRandom
	modeOnce
)

// Feeder is a table of rows loaded from a CSV (first line = header) or JSONL
// (one JSON object per line) file. It is immutable once loaded, so templates
// on many goroutines share it.
//
// Cells are stored as one buffer of JSON and an index of offsets rather
// than a value per cell: ten million rows would otherwise cost ten million
// allocations and their headers.
type Feeder struct {
	mode    feedMode
	cols    []string
	keys    []string // `"column":`, for whole-row objects
	data    []byte   // the cells, each as JSON; an empty cell is a missing JSONL key
	bounds  []uint32 // per row: the start of its first cell, then the end of each cell
	rowBase []uint32 // row r's entries in bounds start at rowBase[r]; rowBase[Len()] = len(bounds)
}

// LoadFeeder reads path; format "csv" or "jsonl" ("" = from the extension
// .csv, .jsonl or .ndjson); mode "sequential" (row (seq-1) mod n, also
// for ""), "random" (a uniform row) or "once" (row seq-1; exhausted when seq >
// n). Errors name the file, and the line when one is at fault. Files over
// 256 MiB, 10 million rows, 4096 columns or 64 Mi cells (or 1 GiB of cells
// once written as JSON) are refused.
func LoadFeeder(path, format, mode string) (*Feeder, error) {
	return loadFeeder(path, format, mode, defaultLimits)
}

func loadFeeder(path, format, mode string, lim feedLimits) (*Feeder, error) {
	m, err := parseMode(mode)
	if err != nil {
		return nil, fmt.Errorf("feeder %s: %w", path, err)
	}
	csvFormat, err := parseFormat(path, format)
	if err != nil {
		return nil, fmt.Errorf("feeder %s: %w", path, err)
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("feeder: %w", err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("feeder: %w", err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("feeder %s: is a directory", path)
	}
	tooBig := fmt.Errorf("feeder %s: the file is over %s, the limit for a feeder", path, size(lim.bytes))
	if info.Size() > lim.bytes {
		return nil, tooBig
	}
	// Read through a limit too: a pipe or a growing file has no honest size.
	data, err := io.ReadAll(io.LimitReader(file, lim.bytes+1))
	if err != nil {
		return nil, fmt.Errorf("feeder: %w", err)
	}
	if int64(len(data)) > lim.bytes {
		return nil, tooBig
	}
	f, err := parseFeeder(path, data, csvFormat, lim)
	if err != nil {
		return nil, err
	}
	f.mode = m
	return f, nil
}

// size writes a byte count for a message: in MiB when it is whole MiB.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func parseMode(mode string) (feedMode, error) {
	switch mode {
	case "", "sequential":
		return modeSequential, nil
	case "random":
		return modeRandom, nil
	case "once":
		return modeOnce, nil
	}
	return 0, fmt.Errorf("unknown mode %q (expected sequential, random or once)", mode)
}

// parseFormat reports whether the file is CSV (else JSONL).
func parseFormat(path, format string) (bool, error) {
	switch format {
	case "csv":
		return true, nil
	case "jsonl":
		return false, nil
	case "":
		switch strings.ToLower(filepath.Ext(path)) {
		case ".csv":
			return true, nil
		case ".jsonl", ".ndjson":
			return false, nil
		}
		return false, errors.New("cannot tell the format from the extension (expected .csv, .jsonl or .ndjson); give the format, csv or jsonl")
	}
	return false, fmt.Errorf("unknown format %q (expected csv or jsonl)", format)
}

// Len returns the number of rows (not counting a CSV header).
func (f *Feeder) Len() int {
	if len(f.rowBase) == 0 {
		return 0
	}
	return len(f.rowBase) - 1
}

// Columns returns the CSV header, or the union of JSONL keys in first-seen
// order. The slice is a copy.
func (f *Feeder) Columns() []string { return slices.Clone(f.cols) }

// pick returns the row for seq in the feeder's mode; false once a "once"
// feeder is exhausted.
func (f *Feeder) pick(r *rand.Rand, seq uint64) (int, bool) {
	n := uint64(f.Len())
	switch f.mode {
	case modeRandom:
		return r.IntN(int(n)), true
	case modeOnce:
		if seq == 0 || seq > n {
			return 0, false
		}
		return int(seq - 1), true
	}
	return int((seq - 1) % n), true
}

var bom = []byte("\xef\xbb\xbf")

// builder accumulates rows in the Feeder's compact layout.
type builder struct {
	name  string
	lim   feedLimits
	f     Feeder
	rows  int
	cells int
	data  []byte
}

func (b *builder) startRow(line int) error {
	if b.rows == b.lim.rows {
		return fmt.Errorf("%s:%d: more than %d rows, the limit for a feeder", b.name, line, b.lim.rows)
	}
	b.rows++
	b.f.rowBase = append(b.f.rowBase, uint32(len(b.f.bounds)))
	b.f.bounds = append(b.f.bounds, uint32(len(b.data)))
	return nil
}

// endCell ends a cell of the current row, which the caller has appended to
// b.data (in place, so a cell is copied once).
func (b *builder) endCell(line int) error {
	if b.cells == b.lim.cells {
		return fmt.Errorf("%s:%d: more than %d cells, the limit for a feeder", b.name, line, b.lim.cells)
	}
	if len(b.data) > b.lim.data {
		return fmt.Errorf("%s:%d: the cells take more than %s as JSON, the limit for a feeder", b.name, line, size(int64(b.lim.data)))
	}
	b.cells++
	b.f.bounds = append(b.f.bounds, uint32(len(b.data)))
	return nil
}

func (b *builder) addColumn(line int, name string) error {
	if len(b.f.cols) == b.lim.columns {
		return fmt.Errorf("%s:%d: more than %d columns, the limit for a feeder", b.name, line, b.lim.columns)
	}
	b.f.cols = append(b.f.cols, name)
	b.f.keys = append(b.f.keys, string(append(wire.AppendString(nil, name), ':')))
	return nil
}

func (b *builder) finish() (*Feeder, error) {
	b.f.rowBase = append(b.f.rowBase, uint32(len(b.f.bounds)))
	b.f.data = b.data // not copied into a string: that would double the peak
	return &b.f, nil
}

// parseFeeder parses a whole file in memory; name is used in errors.
func parseFeeder(name string, data []byte, isCSV bool, lim feedLimits) (*Feeder, error) {
	data = bytes.TrimPrefix(data, bom)
	b := &builder{name: name, lim: lim}
	if isCSV {
		return b.csv(data)
	}
	return b.jsonl(data)
}

// csv reads the file twice: first to check it and to find the numeric
// columns, then to store every cell as JSON. Storing JSON (rather than the
// text, encoded on each use) makes a $feed a plain copy, which halves the cost
// of a request that reads an address; reading twice rather than rebuilding
// keeps the peak memory at the file plus its cells.
func (b *builder) csv(data []byte) (*Feeder, error) {
	numeric, err := b.checkCSV(data)
	if err != nil {
		return nil, err
	}
	r := newCSVReader(data)
	if _, err := r.Read(); err != nil { // the header, checked already
		return nil, b.csvError(err)
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, b.csvError(err)
		}
		line, _ := r.FieldPos(0)
		if err := b.startRow(line); err != nil {
			return nil, err
		}
		for i, cell := range rec {
			if numeric[i] {
				b.data = append(b.data, cell...)
			} else {
				b.data = wire.AppendString(b.data, cell)
			}
			if err := b.endCell(line); err != nil {
				return nil, err
			}
		}
	}
	return b.finish()
}

func newCSVReader(data []byte) *csv.Reader {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // checked here, to say how many fields were expected
	r.ReuseRecord = true
	return r
}

// checkCSV reads the header into the columns, checks every row's shape, and
// reports which columns hold only JSON numbers.
func (b *builder) checkCSV(data []byte) (numeric []bool, err error) {
	r := newCSVReader(data)
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file (expected a header line, then rows)", b.name)
	}
	if err != nil {
		return nil, b.csvError(err)
	}
	for i, h := range header {
		switch {
		case h == "":
			return nil, fmt.Errorf("%s:1: column %d of the header has no name", b.name, i+1)
		case slices.Contains(b.f.cols, h):
			return nil, fmt.Errorf("%s:1: column %q appears twice in the header", b.name, h)
		}
		if err := b.addColumn(1, h); err != nil {
			return nil, err
		}
	}
	numeric = make([]bool, len(header))
	for i := range numeric {
		numeric[i] = true
	}
	rows := 0
	for ; ; rows++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, b.csvError(err)
		}
		if len(rec) != len(b.f.cols) {
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("%s:%d: %d fields, but the header has %d", b.name, line, len(rec), len(b.f.cols))
		}
		for i, cell := range rec {
			numeric[i] = numeric[i] && wire.IsNumber(cell)
		}
	}
	if rows == 0 {
		return nil, fmt.Errorf("%s: a header but no rows", b.name)
	}
	return numeric, nil
}

func (b *builder) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", b.name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %v", b.name, err)
}

func (b *builder) jsonl(data []byte) (*Feeder, error) {
	index := map[string]int{}
	var spans [][2]int // per column: the cell's span in scratch, or -1
	var scratch []byte
	for line := 1; len(data) > 0; line++ {
		var text []byte
		text, data, _ = bytes.Cut(data, []byte{'\n'})
		text = bytes.TrimSpace(text) // CRLF, indentation, blank lines
		if len(text) == 0 {
			continue
		}
		if !utf8.Valid(text) {
			return nil, fmt.Errorf("%s:%d: not valid UTF-8", b.name, line)
		}
		for i := range spans {
			spans[i] = [2]int{-1, -1}
		}
		scratch = scratch[:0]
		if err := b.object(line, text, index, &spans, &scratch); err != nil {
			return nil, err
		}
		if err := b.startRow(line); err != nil {
			return nil, err
		}
		last := len(spans) - 1 // leave out trailing missing cells
		for last >= 0 && spans[last][0] < 0 {
			last--
		}
		for _, s := range spans[:last+1] {
			if s[0] >= 0 {
				b.data = append(b.data, scratch[s[0]:s[1]]...)
			}
			if err := b.endCell(line); err != nil {
				return nil, err
			}
		}
	}
	if b.rows == 0 {
		return nil, fmt.Errorf("%s: empty file (expected one JSON object per line)", b.name)
	}
	return b.finish()
}

// object decodes one JSONL line, appending each value (compacted) to scratch
// and recording its span by column.
func (b *builder) object(line int, text []byte, index map[string]int, spans *[][2]int, scratch *[]byte) error {
	notObject := fmt.Errorf("%s:%d: not a JSON object (a JSONL feeder has one object per line)", b.name, line)
	if text[0] != '{' {
		return notObject
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return notObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s:%d: invalid JSON: %v", b.name, line, err)
		}
		key := tok.(string) // the decoder only yields strings in key position
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s:%d: invalid JSON: %v", b.name, line, err)
		}
		col, ok := index[key]
		if !ok {
			if err := b.addColumn(line, key); err != nil {
				return err
			}
			col = len(b.f.cols) - 1
			index[key] = col
			*spans = append(*spans, [2]int{-1, -1})
		}
		if (*spans)[col][0] >= 0 {
			return fmt.Errorf("%s:%d: key %q appears twice", b.name, line, key)
		}
		start := len(*scratch)
		if *scratch, err = appendCompact(*scratch, raw); err != nil {
			return fmt.Errorf("%s:%d: invalid JSON: %v", b.name, line, err)
		}
		(*spans)[col] = [2]int{start, len(*scratch)}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s:%d: invalid JSON: %v", b.name, line, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s:%d: more after the object (a JSONL feeder has one object per line)", b.name, line)
	}
	return nil
}
