package soak

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestTornLastLine is what a crash in the middle of an interval's write
// leaves (the files are appended, a line per interval): every whole
// interval before the torn last line still reads, in the interval log with
// hdrhistogram-go's reader and in the series with a line-by-line JSON
// decoder; the torn line is an error for the log's reader (after the whole
// intervals) and invalid JSON for the series, never a panic and never a
// wrong value.
func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	hlog, series := filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.jsonl")
	w, err := NewWriter(hlog, series, testStart, "")
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	for i := range n {
		p, from, to, c, s := testInterval(i)
		if err := w.Interval(p, from, to, c, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{2, 10, 40} {
		// The log: 2 lines per interval (corrected, service); cut into the
		// last, past its newline (a cut of 1 would only lose the newline).
		data, err := os.ReadFile(hlog)
		if err != nil {
			t.Fatal(err)
		}
		torn := data[:len(data)-cut]
		r := hdr.NewHistogramLogReader(bytes.NewReader(torn))
		whole := 0
		var readErr error
		for {
			h, err := r.NextIntervalHistogram()
			if err != nil {
				readErr = err
				break
			}
			if h == nil {
				break
			}
			whole++
		}
		// All but the torn last line (the last service histogram) read.
		if whole != 2*n-1 {
			t.Errorf("log cut %d bytes short: %d whole intervals read, want %d (error %v)", cut, whole, 2*n-1, readErr)
		}

		data, err = os.ReadFile(series)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(data[:len(data)-cut], []byte("\n"))
		good := 0
		for i, line := range lines {
			if json.Valid(line) {
				good++
			} else if i != len(lines)-1 {
				t.Errorf("series cut %d bytes short: line %d of %d does not parse", cut, i+1, len(lines))
			}
		}
		if good != n-1 {
			t.Errorf("series cut %d bytes short: %d whole points, want %d", cut, good, n-1)
		}
	}
}
