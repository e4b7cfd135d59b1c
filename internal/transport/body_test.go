package transport

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
)

// TestReadLimited pins the reader behind MaxBody with an exact byte count:
// an endless source is read for at most max+1 bytes whatever dst's
// capacity, and a body of exactly max is accepted.
func TestReadLimited(t *testing.T) {
	for _, tc := range []struct {
		max, size, dstCap int // size < 0: endless
		wantErr           error
	}{
		{100, 0, 0, nil},
		{100, 100, 0, nil},
		{100, 100, 1000, nil},
		{100, 101, 0, ErrBodyTooLarge},
		{1000, -1, 0, ErrBodyTooLarge},
		{1000, -1, 100000, ErrBodyTooLarge},
		{4096, -1, 4096, ErrBodyTooLarge},
	} {
		t.Run(fmt.Sprintf("max%d/size%d/cap%d", tc.max, tc.size, tc.dstCap), func(t *testing.T) {
			src := &patternReader{n: 1 << 40}
			if tc.size >= 0 {
				src.n = int64(tc.size)
			}
			got, err := readLimited(src, make([]byte, 0, tc.dstCap), tc.max)
			if err != tc.wantErr {
				t.Fatalf("err %v; want %v", err, tc.wantErr)
			}
			// The whole body, or on error the first max bytes of it.
			want := tc.size
			if tc.wantErr != nil {
				want = tc.max
			}
			if len(got) != want {
				t.Errorf("returned %d bytes; want %d", len(got), want)
			}
			if src.read > int64(tc.max)+1 {
				t.Errorf("read %d bytes from the source; limit %d allows %d", src.read, tc.max, tc.max+1)
			}
		})
	}
}

// endless writes a body that never ends until the client goes away, so a
// client that tries to read it all hangs the test instead of passing.
func endless(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	chunk := bytes.Repeat([]byte("z"), 4096)
	for {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		if r.Context().Err() != nil {
			return
		}
	}
}
