package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"testing/iotest"
)

// badHeader marks an ErrBadHeader in the sequences the CLReader tests compare.
const badHeader = "<bad header>"

// clDrain calls Next until it returns an error other than ErrFrameTooLarge
// and returns what it saw, one string per call, checking on the way that no
// frame and no buffer outgrows max.
func clDrain(t testing.TB, c *CLReader, max int) []string {
	t.Helper()
	var got []string
	for range 1 << 20 {
		f, err := c.Next()
		if len(f) > max || cap(c.buf) > max {
			t.Fatalf("frame of %d bytes, buffer of %d; max %d", len(f), cap(c.buf), max)
		}
		switch {
		case err == nil:
			got = append(got, string(f))
			continue
		case errors.Is(err, ErrFrameTooLarge):
			got = append(got, tooLarge)
			continue
		case err == io.EOF:
			got = append(got, cleanEOF)
		case errors.Is(err, io.ErrUnexpectedEOF):
			got = append(got, cutOffEOF)
		case errors.Is(err, ErrBadHeader):
			got = append(got, badHeader)
		default:
			got = append(got, otherError+err.Error())
		}
		return got
	}
	t.Fatal("CLReader.Next never returned an end-of-stream error")
	return nil
}

// cl frames body with a Content-Length header.
func cl(body string) string { return string(AppendCLHeader(nil, len(body))) + body }

func TestCLReader(t *testing.T) {
	const max = 8
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty stream", "", []string{cleanEOF}},
		{"one frame", cl("{}"), []string{"{}", cleanEOF}},
		{"several frames", cl("a") + cl("bb") + cl("ccc"), []string{"a", "bb", "ccc", cleanEOF}},
		{"empty body", cl("") + cl("a"), []string{"", "a", cleanEOF}},
		{"body holding CRLFs and headers", cl("\r\n\r\n") + cl("C-L: 9"), []string{"\r\n\r\n", "C-L: 9", cleanEOF}},
		{"Content-Type after", "Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}", []string{"{}", cleanEOF}},
		{"Content-Type before", "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", []string{"{}", cleanEOF}},
		{"unknown header ignored", "X-Whatever: 99\r\nContent-Length: 1\r\n\r\na", []string{"a", cleanEOF}},
		{"lower-case name", "content-length: 2\r\n\r\n{}", []string{"{}", cleanEOF}},
		{"upper-case name", "CONTENT-LENGTH: 2\r\n\r\n{}", []string{"{}", cleanEOF}},
		{"no space, padded value", "Content-length:2\r\n\r\n{}" + "Content-Length: \t2 \r\n\r\n[]", []string{"{}", "[]", cleanEOF}},
		{"LF line endings", "Content-Length: 2\n\n{}", []string{"{}", cleanEOF}},
		{"same length twice", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", []string{"{}", cleanEOF}},
		{"stray blank line between frames", cl("a") + "\r\n" + cl("b"), []string{"a", "b", cleanEOF}},
		{"stray blank lines between frames", cl("a") + "\r\n\n\r\n" + cl("b"), []string{"a", "b", cleanEOF}},
		{"stray blank line at the end", cl("a") + "\r\n", []string{"a", cleanEOF}},
		{"exactly max", cl(x(max)) + cl("b"), []string{x(max), "b", cleanEOF}},
		{"max+1 skipped, next frame kept", cl(x(max+1)) + cl("next"), []string{tooLarge, "next", cleanEOF}},
		{"much larger than max", cl(x(1000*max)) + cl("n"), []string{tooLarge, "n", cleanEOF}},
		{"two too large in a row", cl(x(max+1)) + cl(x(3*max)) + cl("ok"), []string{tooLarge, tooLarge, "ok", cleanEOF}},
		{"missing length", "Content-Type: application/json\r\n\r\n{}", []string{badHeader}},
		{"only a blank line and EOF", "\r\n", []string{cleanEOF}},
		{"two different lengths", "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", []string{badHeader}},
		{"negative", "Content-Length: -1\r\n\r\n{}", []string{badHeader}},
		{"non-numeric", "Content-Length: two\r\n\r\n{}", []string{badHeader}},
		{"hex", "Content-Length: 0x2\r\n\r\n{}", []string{badHeader}},
		{"empty value", "Content-Length:\r\n\r\n{}", []string{badHeader}},
		{"two numbers", "Content-Length: 1 2\r\n\r\n{}", []string{badHeader}},
		{"beyond int64", "Content-Length: 99999999999999999999\r\n\r\n{}", []string{badHeader}},
		{"line without a colon", "Content-Length 2\r\n\r\n{}", []string{badHeader}},
		{"bad header after good frames", cl("a") + "garbage\r\n\r\n", []string{"a", badHeader}},
		{"huge (2^62), then the stream ends", "Content-Length: 4611686018427387904\r\n\r\n{\"partial", []string{tooLarge, cutOffEOF}},
		{"header line over 8 KiB", "Content-Length: 2\r\nX-Pad: " + x(9000) + "\r\n\r\n{}", []string{badHeader}},
		{"header block over 8 KiB", "Content-Length: 2\r\n" + strings.Repeat("X-Pad: 0123456789\r\n", 500) + "\r\n{}", []string{badHeader}},
		{"header block just under 8 KiB", "Content-Length: 2\r\nX-Pad: " + x(8000) + "\r\n\r\n{}", []string{"{}", cleanEOF}},
		{"EOF inside the header", "Content-Length: 2\r\n", []string{cutOffEOF}},
		{"EOF inside a header line", "Content-Len", []string{cutOffEOF}},
		{"EOF inside the body", "Content-Length: 5\r\n\r\n{}", []string{cutOffEOF}},
		{"EOF before the body", "Content-Length: 5\r\n\r\n", []string{cutOffEOF}},
		{"EOF inside a skipped body", "Content-Length: 100\r\n\r\nxx", []string{tooLarge, cutOffEOF}},
		{"EOF after a frame, inside the next", cl("a") + "Content-Length: 3\r\n\r\nb", []string{"a", cutOffEOF}},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				c := NewCLReader(rd.wrap(strings.NewReader(tc.in)), max)
				got := clDrain(t, c, max)
				if strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("input %.80q, max %d:\n got %q\nwant %q", tc.in, max, got, tc.want)
				}
			})
		}
	}
}

// TestCLReaderReadError checks that an error from the underlying reader, in
// a header, a body or a skipped body, reaches the caller as it is: a reset
// connection is not an end of stream.
func TestCLReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	for _, in := range []string{"", "Content-Len", "Content-Length: 5\r\n\r\n{", "Content-Length: 500\r\n\r\n{"} {
		c := NewCLReader(io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom)), 64)
		_, err := c.Next()
		if errors.Is(err, ErrFrameTooLarge) {
			_, err = c.Next() // reported at its header; the skip comes next
		}
		if !errors.Is(err, boom) {
			t.Errorf("after %q: error %v; want %v", in, err, boom)
		}
	}
}

// TestCLReaderHugeThenClose has a server announce a 2^62-byte body, send a
// little of it and hang up: Next reports the cut, having held none of it.
func TestCLReaderHugeThenClose(t *testing.T) {
	client, server := net.Pipe()
	go func() {
		io.WriteString(server, "Content-Length: 4611686018427387904\r\n\r\n")
		server.Write(bytes.Repeat([]byte("z"), 100<<10))
		server.Close()
	}()
	c := NewCLReader(client, 1<<10)
	if _, err := c.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Next: %v; want ErrFrameTooLarge as soon as the header is read", err)
	}
	_, err := c.Next()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Next: %v; want an error wrapping io.ErrUnexpectedEOF", err)
	}
	if cap(c.buf) > 1<<10 {
		t.Errorf("buffer of %d bytes", cap(c.buf))
	}
}

// clStream frames bodies with AppendCLHeader, one after another.
func clStream(bodies [][]byte) []byte {
	var b []byte
	for _, body := range bodies {
		b = AppendCLHeader(b, len(body))
		b = append(b, body...)
	}
	return b
}

// TestCLReaderRoundTrip writes random bodies with AppendCLHeader and reads
// them back through every chunking.
func TestCLReaderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const max = 300
	var bodies [][]byte
	var want []string
	for range 200 {
		b := make([]byte, rng.IntN(400))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		bodies = append(bodies, b)
		if len(b) > max {
			want = append(want, tooLarge)
		} else {
			want = append(want, string(b))
		}
	}
	want = append(want, cleanEOF)
	data := clStream(bodies)
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got := clDrain(t, NewCLReader(rd.wrap(bytes.NewReader(data)), max), max)
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("round trip lost or changed bodies (%d read, %d written)", len(got), len(want))
			}
		})
	}
}

// TestCLReaderAllocs checks the hot path: once the buffer has its size,
// reading frames allocates nothing.
func TestCLReaderAllocs(t *testing.T) {
	data := []byte(cl(`{"jsonrpc":"2.0","id":1,"result":1}`) + "Content-Type: application/json\r\n" + cl(`{"jsonrpc":"2.0","id":22,"result":[1,2,3]}`))
	c := NewCLReader(&cycleReader{data: data, chunk: 97}, 1<<20)
	for range 1000 {
		if _, err := c.Next(); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if n := testing.AllocsPerRun(10000, func() { _, err = c.Next() }); n != 0 {
		t.Errorf("Next allocates %v times per frame; want 0", n)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkCLReader(b *testing.B) {
	for _, size := range []int{64, 4096} {
		b.Run(fmt.Sprintf("body=%d", size), func(b *testing.B) {
			body := bytes.Repeat([]byte("x"), size)
			data := clStream([][]byte{body, body, body, body})
			c := NewCLReader(&cycleReader{data: data, chunk: 32 << 10}, 1<<20)
			b.ReportAllocs()
			b.SetBytes(int64(len(data) / 4))
			for b.Loop() {
				if _, err := c.Next(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// TestRequestCLReader: a server's reader refuses what a reply reader gets
// past, each way with the reason a server answers with.
func TestRequestCLReader(t *testing.T) {
	const max = 8
	for _, tc := range []struct {
		name, in string
		want     []string // frames, then the end: a reason, tooLarge or cleanEOF
	}{
		{"plain", cl("{}") + cl("ab"), []string{"{}", "ab", cleanEOF}},
		{"headers, any case, bare LF", "content-type: x\ncontent-LENGTH:2  \n\n{}", []string{"{}", cleanEOF}},
		{"blank line first", "\r\n" + cl("{}"), []string{"no Content-Length header"}},
		{"no length", "Content-Type: x\r\n\r\n{}", []string{"no Content-Length header"}},
		{"JSON line", "{\"a\":1}\n", []string{"malformed header line"}},
		{"space before colon", "Content-Length : 2\r\n\r\n{}", []string{"malformed header line"}},
		{"plus sign", "Content-Length: +2\r\n\r\n{}", []string{"Content-Length is not a decimal number"}},
		{"empty value", "Content-Length:\r\n\r\n{}", []string{"Content-Length is not a decimal number"}},
		{"two lengths", "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", []string{"two different Content-Length headers"}},
		{"header block too long", "X: " + strings.Repeat("a", 9000) + "\r\n", []string{"header block over 8192 bytes"}},
		{"ends in a header", "Content-Length: 2\r\n", []string{"stream ended inside a header"}},
		{"ends in a body", "Content-Length: 5\r\n\r\n{}", []string{"stream ended inside a frame"}},
		{"length beyond int64 is too large", "Content-Length: 99999999999999999999999\r\n\r\n", []string{tooLarge}},
		{"too large", cl(strings.Repeat("x", max+1)), []string{tooLarge}},
	} {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				c := NewRequestCLReader(rd.wrap(strings.NewReader(tc.in)), max)
				var got []string
				for range 100 {
					f, err := c.Next()
					var he *HeaderError
					switch {
					case err == nil:
						got = append(got, string(f))
						continue
					case errors.Is(err, ErrFrameTooLarge):
						got = append(got, tooLarge)
					case err == io.EOF:
						got = append(got, cleanEOF)
					case errors.As(err, &he) && errors.Is(err, ErrBadHeader):
						got = append(got, he.Reason)
					default:
						got = append(got, otherError+err.Error())
					}
					break
				}
				if strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("input %.60q:\n got %q\nwant %q", tc.in, got, tc.want)
				}
			})
		}
	}
}

// TestCLReaderBuffered: Buffered is true only when a whole frame with the
// common header is in the buffer.
func TestCLReaderBuffered(t *testing.T) {
	c := NewCLReader(strings.NewReader(cl("{}")+cl("abc")+"Content-Length: 9\r\n\r\nab"), 100)
	var got []bool
	for range 3 {
		if _, err := c.Next(); err != nil {
			break
		}
		got = append(got, c.Buffered())
	}
	if fmt.Sprint(got) != "[true false]" {
		t.Errorf("Buffered after each frame = %v, want [true false]", got)
	}
}
