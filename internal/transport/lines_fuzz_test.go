package transport

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// chunkReader hands out data in reads whose sizes come from sizes (cycled):
// each byte c gives a read of c&0x7f+1 bytes, and a set top bit makes the
// read that reaches the end return io.EOF together with its data.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n, eofWithData := len(p), false
	if len(c.sizes) > 0 {
		s := c.sizes[c.i%len(c.sizes)]
		c.i++
		n, eofWithData = min(n, int(s&0x7f)+1), s&0x80 != 0
	}
	n = copy(p[:n], c.data)
	c.data = c.data[n:]
	if len(c.data) == 0 && eofWithData {
		return n, io.EOF
	}
	return n, nil
}

// refSplit is the obvious, memory-hungry splitter LineReader must agree
// with: split on '\n', drop one trailing '\r', a line longer than max is one
// ErrFrameTooLarge (blank or not), a line of JSON whitespace is skipped. An
// unterminated last line is a cut-off frame, or too large when it is
// already too long; for a request reader (final) it is a frame like any.
func refSplit(data []byte, max int, final bool) []string {
	var out []string
	lines := bytes.Split(data, []byte("\n"))
	for _, ln := range lines[:len(lines)-1] {
		ln = bytes.TrimSuffix(ln, []byte("\r"))
		switch {
		case len(ln) > max:
			out = append(out, tooLarge)
		case len(bytes.Trim(ln, " \t\r")) == 0:
		default:
			out = append(out, string(ln))
		}
	}
	switch tail := lines[len(lines)-1]; {
	case len(tail) == 0:
		out = append(out, cleanEOF)
	case final && len(bytes.TrimSuffix(tail, []byte("\r"))) <= max:
		if len(bytes.Trim(tail, " \t\r")) > 0 {
			out = append(out, string(bytes.TrimSuffix(tail, []byte("\r"))))
		}
		out = append(out, cleanEOF)
	case len(bytes.TrimSuffix(tail, []byte("\r"))) > max:
		out = append(out, tooLarge, cleanEOF)
	default:
		out = append(out, cutOffEOF)
	}
	return out
}

// FuzzLineReader checks LineReader against refSplit for any input, limit and
// read chunking, and that its buffer never outgrows the limit.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n c \n"), uint16(8), []byte{0})
	f.Add([]byte("xxxxxxxx\r\nb\r\n"), uint16(8), []byte{8, 0x80})
	f.Add([]byte("xxxxxxxxx\nnext\n"), uint16(8), []byte{2, 3})
	f.Add([]byte(strings.Repeat("y", 300)+"\n{}\n"), uint16(40), []byte{})
	f.Add([]byte("\r\n   \n\t\r\r\n"), uint16(1), []byte{0x81})
	f.Add([]byte("tail without newline"), uint16(100), []byte{5})
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":"\n"}`+"\n"), uint16(0), []byte{0xff})
	f.Add([]byte("\f\n\v\n\u00a0\n"), uint16(8), []byte{1})
	f.Fuzz(func(t *testing.T, data []byte, m uint16, sizes []byte) {
		max := int(m % 1024)
		final := m&0x8000 != 0
		l := NewLineReader(&chunkReader{data: data, sizes: sizes}, max)
		if final {
			l = NewRequestLineReader(&chunkReader{data: data, sizes: sizes}, max)
		}
		got := drain(t, l)
		want := refSplit(data, max, final)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("input %q, max %d, chunks %v:\n got %q\nwant %q", data, max, sizes, got, want)
		}
		if cap(l.buf) > max+2 {
			t.Errorf("buffer capacity %d for max %d", cap(l.buf), max)
		}
	})
}
