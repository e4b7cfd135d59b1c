// Package soak holds what a long run adds to an ordinary one: files that
// receive every interval as it closes (an HdrHistogram interval log and a
// JSON Lines time series), so a run that dies after hours keeps all but its
// last interval, and the analysis that tells a server whose memory or
// pending requests grow steadily from one that holds level.
package soak

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/stats"
)

// MaxValueUnitRatio is what the interval log's Interval_Max column is
// divided by. The histograms record microseconds, so a ratio of 1000 makes
// that column milliseconds, the unit HdrHistogram's tools (and people) read
// it in; pass the same figure as HistogramLogProcessor's
// -outputValueUnitRatio to get its percentiles in milliseconds too.
const MaxValueUnitRatio = 1000.0

// ServiceTag tags the service-time histogram of each interval in the log;
// the corrected-latency histogram is untagged, so tools that ignore tags
// read the figure that matters (HistogramLogProcessor: -tag service for the
// other).
const ServiceTag = "service"

// Writer appends every closed interval of a run to an interval log and a
// series file. Each interval goes to the operating system in one write per
// file and is synced before Interval returns, so a crash of rpcload (or of
// the machine) loses at most the interval in progress. Its methods may be
// called from several goroutines.
type Writer struct {
	mu         sync.Mutex
	hlog       *os.File
	series     *os.File
	hlogPath   string
	seriesPath string
	buf        []byte
	closed     bool
}

// NewWriter creates (or truncates) the interval log at hlogPath and the
// series file at seriesPath; an empty path leaves that file out. The log
// starts with the format version, the start time (which is also its base
// time: interval timestamps are seconds since start), the legend and, if it
// is not empty, comment (line breaks become spaces).
func NewWriter(hlogPath, seriesPath string, start time.Time, comment string) (*Writer, error) {
	if hlogPath != "" && hlogPath == seriesPath {
		return nil, fmt.Errorf("the interval log and the series file are the same file: %s", hlogPath)
	}
	w := &Writer{hlogPath: hlogPath, seriesPath: seriesPath}
	var err error
	if hlogPath != "" {
		if w.hlog, err = create(hlogPath, "interval log"); err != nil {
			return nil, err
		}
		if err = w.writeHeader(start, comment); err != nil {
			w.hlog.Close()
			return nil, fmt.Errorf("writing the interval log %s: %w", hlogPath, err)
		}
	}
	if seriesPath != "" {
		if w.series, err = create(seriesPath, "series file"); err != nil {
			if w.hlog != nil {
				w.hlog.Close()
			}
			return nil, err
		}
	}
	return w, nil
}

// create opens path for writing from its start. A directory is refused with
// a message of its own: opening one for writing fails with a bare EISDIR
// that does not tell the user which option pointed there.
func create(path, what string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("the %s %s is a directory, not a file", what, path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the %s: %w", what, err)
	}
	return f, nil
}

// writeHeader writes the log's opening lines, synced like an interval.
// StartTime and BaseTime are written with milliseconds (as Java's
// HdrHistogram does): the library's OutputStartTime and OutputBaseTime
// print whole seconds, which would shift every interval of the log by up to
// a second against the series file.
func (w *Writer) writeHeader(start time.Time, comment string) error {
	lw := hdr.NewHistogramLogWriter(w.hlog)
	secs := strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64)
	iso := start.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	comment = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(comment)
	for _, step := range []func() error{
		lw.OutputLogFormatVersion,
		func() error { return lw.OutputComment("[StartTime: " + secs + " (seconds since epoch), " + iso + "]") },
		func() error { return lw.OutputComment("[BaseTime: " + secs + " (seconds since epoch)]") },
		lw.OutputLegend,
		func() error {
			return lw.OutputComment(" values in microseconds; Interval_Max in milliseconds (max value unit ratio 1000); " +
				"untagged: corrected latency, Tag=" + ServiceTag + ": service time")
		},
		func() error {
			if comment == "" {
				return nil
			}
			return lw.OutputComment(" " + comment)
		},
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return w.hlog.Sync()
}

// Interval writes one closed interval: corrected (untagged) and service
// (Tag=service) to the log, stamped startOffset..endOffset since the start
// given to NewWriter, and p as one JSON line to the series file. A nil
// histogram is left out of the log. The histograms are only read.
func (w *Writer) Interval(p stats.Point, startOffset, endOffset time.Duration, corrected, service *hdr.Histogram) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("soak: Interval called after Close")
	}
	if w.hlog != nil {
		w.buf = w.buf[:0]
		var err error
		for _, h := range []struct {
			tag  string
			hist *hdr.Histogram
		}{{"", corrected}, {ServiceTag, service}} {
			if h.hist == nil {
				continue
			}
			if w.buf, err = appendIntervalLine(w.buf, h.tag, startOffset, endOffset, h.hist); err != nil {
				return fmt.Errorf("encoding an interval for %s: %w", w.hlogPath, err)
			}
		}
		if err := writeSynced(w.hlog, w.buf); err != nil {
			return fmt.Errorf("writing the interval log %s: %w", w.hlogPath, err)
		}
	}
	if w.series != nil {
		line, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encoding an interval for %s: %w", w.seriesPath, err)
		}
		if err := writeSynced(w.series, append(line, '\n')); err != nil {
			return fmt.Errorf("writing the series file %s: %w", w.seriesPath, err)
		}
	}
	return nil
}

// appendIntervalLine appends h as one interval line in the format of Java's
// HistogramLogWriter ([Tag=T,]start,length,max,payload). It is written here
// rather than by hdrhistogram-go's OutputIntervalHistogramWithLogOptions
// because that library offers no way to set the max value unit ratio (the
// options' fields are unexported and the default is nanoseconds to
// milliseconds), and because it would need the caller's histogram tagged
// and stamped, which the caller may still be using.
func appendIntervalLine(buf []byte, tag string, from, to time.Duration, h *hdr.Histogram) ([]byte, error) {
	payload, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return buf, err
	}
	if tag != "" {
		buf = append(buf, "Tag="...)
		buf = append(buf, tag...)
		buf = append(buf, ',')
	}
	buf = strconv.AppendFloat(buf, from.Seconds(), 'f', 3, 64)
	buf = append(buf, ',')
	buf = strconv.AppendFloat(buf, (to - from).Seconds(), 'f', 3, 64)
	buf = append(buf, ',')
	buf = strconv.AppendFloat(buf, float64(h.Max())/MaxValueUnitRatio, 'f', 3, 64)
	buf = append(buf, ',')
	buf = append(buf, payload...)
	return append(buf, '\n'), nil
}

// writeSynced hands b to the operating system in one write and waits until
// it is on disk.
func writeSynced(f *os.File, b []byte) error {
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Sync()
}

// Close closes both files. Calling it again does nothing.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var errs []error
	if w.hlog != nil {
		if err := w.hlog.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the interval log %s: %w", w.hlogPath, err))
		}
	}
	if w.series != nil {
		if err := w.series.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the series file %s: %w", w.seriesPath, err))
		}
	}
	return errors.Join(errs...)
}
