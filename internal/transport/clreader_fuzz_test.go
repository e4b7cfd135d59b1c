package transport

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzCLReader checks two things for any input, limit and read chunking,
// for the reply reader and the request reader alike.
//
// Arbitrary bytes: Next never panics, always ends (with io.EOF or an error),
// never returns a frame longer than max, and its buffer never outgrows max.
//
// A stream written with AppendCLHeader from fuzz-chosen bodies (data cut at
// the lengths in lens) reads back exactly those bodies, a body longer than
// max as one ErrFrameTooLarge in its place, then io.EOF.
func FuzzCLReader(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"), uint16(8), []byte{2}, []byte{0})
	f.Add([]byte("Content-Type: x\r\nContent-Length: 3\r\n\r\nabcContent-Length: 1\r\n\r\nz"), uint16(2), []byte{0, 5, 200}, []byte{1, 0x80})
	f.Add([]byte("content-length: 4611686018427387904\r\n\r\nxx"), uint16(100), []byte{}, []byte{3})
	f.Add([]byte("Content-Length: 1\r\nContent-Length: 2\r\n\r\n{}"), uint16(8), []byte{1, 1, 1}, []byte{})
	f.Add([]byte("\r\n\r\nContent-Length: -1\r\n\r\n"), uint16(0), []byte{0}, []byte{0x81})
	f.Add([]byte(strings.Repeat("X: y\r\n", 2000)), uint16(512), []byte{255, 17}, []byte{0x7f})
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":"Content-Length: 9\r\n\r\n"}`), uint16(40), []byte{30, 30}, []byte{5})
	f.Fuzz(func(t *testing.T, data []byte, m uint16, lens, chunks []byte) {
		max := int(m % 512)

		// Arbitrary bytes: clDrain checks frame and buffer sizes and that
		// Next ends.
		clDrain(t, NewCLReader(&chunkReader{data: data, sizes: chunks}, max), max)
		clDrain(t, NewRequestCLReader(&chunkReader{data: data, sizes: chunks}, max), max)

		// Round trip.
		var bodies [][]byte
		var want []string
		rest := data
		for i := 0; len(lens) > 0 && i < 64 && (len(rest) > 0 || i < len(lens)); i++ {
			n := min(int(lens[i%len(lens)]), len(rest))
			bodies = append(bodies, rest[:n])
			rest = rest[n:]
			if n > max {
				want = append(want, tooLarge)
			} else {
				want = append(want, string(bodies[len(bodies)-1]))
			}
		}
		want = append(want, cleanEOF)
		stream := clStream(bodies)
		got := clDrain(t, NewCLReader(&chunkReader{data: bytes.Clone(stream), sizes: chunks}, max), max)
		if !slices.Equal(got, want) {
			t.Errorf("stream %q, max %d, chunks %v:\n got %q\nwant %q", stream, max, chunks, got, want)
		}
		got = clDrain(t, NewRequestCLReader(&chunkReader{data: bytes.Clone(stream), sizes: chunks}, max), max)
		if !slices.Equal(got, want) {
			t.Errorf("request reader, stream %q, max %d, chunks %v:\n got %q\nwant %q", stream, max, chunks, got, want)
		}
	})
}
