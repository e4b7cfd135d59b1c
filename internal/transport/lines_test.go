package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Markers for what Next returned besides a frame, in the sequences the
// tests compare.
const (
	tooLarge   = "<too large>"
	cleanEOF   = "<EOF>"
	cutOffEOF  = "<unexpected EOF>"
	otherError = "<error>"
)

// drain calls Next until it returns an error other than ErrFrameTooLarge and
// returns what it saw, one string per call. It fails the test if a frame
// holds a newline or the reader never ends.
func drain(t testing.TB, l *LineReader) []string {
	t.Helper()
	var got []string
	for range 1 << 20 {
		f, err := l.Next()
		switch {
		case err == nil:
			if bytes.IndexByte(f, '\n') >= 0 {
				t.Fatalf("frame %q holds a newline", f)
			}
			got = append(got, string(f))
			continue
		case errors.Is(err, ErrFrameTooLarge):
			got = append(got, tooLarge)
			continue
		case err == io.EOF: // io.EOF itself, unwrapped, as io.Reader users expect
			got = append(got, cleanEOF)
		case errors.Is(err, io.ErrUnexpectedEOF):
			got = append(got, cutOffEOF)
		default:
			got = append(got, otherError+err.Error())
		}
		return got
	}
	t.Fatal("LineReader.Next never returned an end-of-stream error")
	return nil
}

// readers wraps an input in every chunking a network can produce, from one
// read for everything to one byte per read. Frames must not depend on it.
var readers = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one-byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data-with-EOF", func(r io.Reader) io.Reader { return iotest.DataErrReader(iotest.OneByteReader(r)) }},
}

func TestLineReader(t *testing.T) {
	const max = 8
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty stream", "", []string{cleanEOF}},
		{"one frame", "{}\n", []string{"{}", cleanEOF}},
		{"several frames", "a\nbb\nccc\n", []string{"a", "bb", "ccc", cleanEOF}},
		{"CRLF", "a\r\nbb\r\n", []string{"a", "bb", cleanEOF}},
		{"only one CR trimmed", "a\r\r\n", []string{"a\r", cleanEOF}},
		{"CR inside a frame kept", "a\rb\n", []string{"a\rb", cleanEOF}},
		{"inner spaces kept", " a b \n", []string{" a b ", cleanEOF}},
		{"empty lines skipped", "\n\na\n\r\n \t \n\r\nb\n\n", []string{"a", "b", cleanEOF}},
		{"only blank lines", "\n \n\r\n", []string{cleanEOF}},
		// Blank is JSON whitespace: other spaces are bytes of a frame, which
		// the scanner then finds invalid.
		{"form feed, vertical tab, NBSP are frames", "\f\n\v\n\u00a0\n", []string{"\f", "\v", "\u00a0", cleanEOF}},
		{"exactly max", x(max) + "\n" + "b\n", []string{x(max), "b", cleanEOF}},
		{"exactly max with CRLF", x(max) + "\r\nb\r\n", []string{x(max), "b", cleanEOF}},
		{"max+1 rejected, next frame kept", x(max+1) + "\nnext\n", []string{tooLarge, "next", cleanEOF}},
		{"max+1 with CRLF rejected", x(max+1) + "\r\nnext\r\n", []string{tooLarge, "next", cleanEOF}},
		{"much longer than max", x(50*max) + "\nnext\n", []string{tooLarge, "next", cleanEOF}},
		{"two long lines in a row", x(3*max) + "\n" + x(max+1) + "\nok\n", []string{tooLarge, tooLarge, "ok", cleanEOF}},
		{"long line between frames", "a\n" + x(9*max) + "\nb\n", []string{"a", tooLarge, "b", cleanEOF}},
		// A blank line longer than max is reported, whatever the chunking:
		// telling it apart from a long frame would take unbounded memory or
		// lookahead, and a server that floods whitespace passes the limit.
		{"blank line longer than max", strings.Repeat(" ", max+1) + "\nb\n", []string{tooLarge, "b", cleanEOF}},
		// The CRLF frame of max grows the buffer to max+2, so the blank
		// line and its newline fit in it when read in one go.
		{"blank line longer than max in a grown buffer", x(max) + "\r\n" + strings.Repeat(" ", max+1) + "\nb\n", []string{x(max), tooLarge, "b", cleanEOF}},
		{"blank line of max", strings.Repeat(" ", max) + "\nb\n", []string{"b", cleanEOF}},
		{"EOF inside a frame", "a\nbc", []string{"a", cutOffEOF}},
		{"EOF after CR", "a\r", []string{cutOffEOF}},
		{"EOF inside a frame of max", x(max), []string{cutOffEOF}},
		{"EOF inside a long frame", x(4 * max), []string{tooLarge, cleanEOF}},
		{"no newline after last frame of max+1", x(max + 1), []string{tooLarge, cleanEOF}},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				l := NewLineReader(rd.wrap(strings.NewReader(tc.in)), max)
				got := drain(t, l)
				if strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("input %q, max %d:\n got %q\nwant %q", tc.in, max, got, tc.want)
				}
				// The buffer never needs more than the frame, a CR and the byte
				// that shows the frame is too long.
				if cap(l.buf) > max+2 {
					t.Errorf("buffer grew to %d bytes; limit is max+2 = %d", cap(l.buf), max+2)
				}
			})
		}
	}
}

// TestLineReaderReadError checks that an error from the underlying reader
// reaches the caller as it is (a reset connection is not an end of stream).
func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom))
	l := NewLineReader(r, 64)
	if f, err := l.Next(); err != nil || string(f) != "a" {
		t.Fatalf("Next() = %q, %v; want \"a\", nil", f, err)
	}
	if _, err := l.Next(); !errors.Is(err, boom) {
		t.Fatalf("Next() error = %v; want %v", err, boom)
	}
}

// patternReader yields n bytes of filler and then tail, without holding the
// filler in memory.
type patternReader struct {
	n    int64
	tail []byte
	read int64 // bytes handed out so far
}

var filler = bytes.Repeat([]byte("x"), 64<<10)

func (p *patternReader) Read(b []byte) (int, error) {
	if p.n > 0 {
		k := copy(b[:min(int64(len(b)), p.n)], filler)
		p.n -= int64(k)
		p.read += int64(k)
		return k, nil
	}
	if len(p.tail) == 0 {
		return 0, io.EOF
	}
	k := copy(b, p.tail)
	p.tail = p.tail[k:]
	p.read += int64(k)
	return k, nil
}

// TestLineReaderHugeLine feeds a 100 MB line with a 1 MiB limit: one
// ErrFrameTooLarge, the following frame intact, and memory bounded by the
// limit rather than by the line.
func TestLineReaderHugeLine(t *testing.T) {
	const limit = 1 << 20
	const next = `{"jsonrpc":"2.0","id":1,"result":true}`
	src := &patternReader{n: 100 << 20, tail: []byte("\n" + next + "\n")}
	l := NewLineReader(src, limit)
	var got []string
	peak := 0
	for {
		f, err := l.Next()
		peak = max(peak, cap(l.buf))
		if errors.Is(err, ErrFrameTooLarge) {
			got = append(got, tooLarge)
			continue
		}
		if err != nil {
			if err != io.EOF {
				t.Fatalf("Next: %v", err)
			}
			break
		}
		got = append(got, string(f))
	}
	if want := []string{tooLarge, next}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q; want %q", got, want)
	}
	if src.read != 100<<20+int64(len(next))+2 {
		t.Errorf("read %d bytes; the whole stream is %d", src.read, 100<<20+len(next)+2)
	}
	if peak > limit+64 {
		t.Errorf("buffer capacity reached %d bytes for a limit of %d", peak, limit)
	}
}

// cycleReader replays data forever, in reads of at most chunk bytes, so that
// frames straddle reads.
type cycleReader struct {
	data  []byte
	off   int
	chunk int
}

func (c *cycleReader) Read(b []byte) (int, error) {
	b = b[:min(len(b), c.chunk)]
	n := 0
	for n < len(b) {
		k := copy(b[n:], c.data[c.off:])
		n += k
		c.off = (c.off + k) % len(c.data)
	}
	return n, nil
}

// TestLineReaderAllocs checks the hot path: once the buffer has its size,
// reading frames allocates nothing.
func TestLineReaderAllocs(t *testing.T) {
	data := []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}\n\r\n{\"jsonrpc\":\"2.0\",\"id\":22,\"result\":[1,2,3]}\r\n")
	l := NewLineReader(&cycleReader{data: data, chunk: 97}, 1<<20)
	for range 1000 { // warm up: grow the buffer once
		if _, err := l.Next(); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	allocs := testing.AllocsPerRun(10000, func() {
		_, err = l.Next()
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("Next allocates %v times per frame; want 0", allocs)
	}
}

func BenchmarkLineReader(b *testing.B) {
	data := bytes.Repeat([]byte("{\"jsonrpc\":\"2.0\",\"id\":12345,\"result\":\"0x1b4\"}\n"), 64)
	l := NewLineReader(&cycleReader{data: data, chunk: 32 << 10}, 1<<20)
	b.ReportAllocs()
	b.SetBytes(int64(len(data) / 64))
	for b.Loop() {
		if _, err := l.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLineReaderBuffered: Buffered is true only when Next will hand out a
// frame without reading, whatever the input and however it is chunked;
// with the input in one read it sees each buffered frame.
func TestLineReaderBuffered(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []bool // Buffered before each Next, the input read whole
	}{
		{"frames", "a\nb\n", []bool{false, true, false}},
		{"no newline at the end", "a\nb", []bool{false, false}},
		{"blank line before a frame", "a\n \r\nb\n", []bool{false, false, false}},
		{"carriage returns", "a\r\nb\r\n", []bool{false, true, false}},
		{"too long", "a\n" + strings.Repeat("x", 100) + "\nb\nc\n", nil}, // the property only
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunked := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tc.in)
				if chunked {
					r = iotest.OneByteReader(r)
				}
				cr := &countingReader{r: r}
				l := NewLineReader(cr, 64)
				var got []bool
				for range 100 {
					b := l.Buffered()
					got = append(got, b)
					before := cr.n
					_, err := l.Next()
					if b && cr.n != before {
						t.Fatalf("chunked=%v: Buffered said true, then Next read", chunked)
					}
					if err != nil && err != ErrFrameTooLarge {
						break
					}
				}
				if !chunked && tc.want != nil && fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("Buffered before each Next: %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestRequestLineReader: a server's reader takes a last line without a
// newline as a frame; otherwise it reads as a reply reader does.
func TestRequestLineReader(t *testing.T) {
	const max = 8
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"last line without newline", "a\nbc", []string{"a", "bc", cleanEOF}},
		{"last line with CR", "a\r", []string{"a", cleanEOF}},
		{"last line of max", strings.Repeat("x", max), []string{strings.Repeat("x", max), cleanEOF}},
		{"last line too long", strings.Repeat("x", max+1), []string{tooLarge, cleanEOF}},
		{"blank last line", "a\n \t", []string{"a", cleanEOF}},
		{"terminated", "a\nb\n", []string{"a", "b", cleanEOF}},
	} {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got := drain(t, NewRequestLineReader(rd.wrap(strings.NewReader(tc.in)), max))
				if strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("input %q:\n got %q\nwant %q", tc.in, got, tc.want)
				}
			})
		}
	}
}
