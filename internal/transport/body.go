package transport

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrBodyTooLarge reports a reply body over MaxBody.
var ErrBodyTooLarge = errors.New("transport: reply body larger than --max-frame")

// StatusError reports a non-2xx HTTP status; the body is kept (cut short) for
// the report.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("transport: HTTP %d %s", e.Code, http.StatusText(e.Code))
}

// readLimited reads r to its end into dst, failing once more than max bytes
// arrive, without reading (or holding) more than max+1.
func readLimited(r io.Reader, dst []byte, max int) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		// Never ask for more than max+1 bytes in all: a larger dst (or
		// append's rounding) must not pull more of an endless body in.
		n, err := r.Read(dst[len(dst):min(cap(dst), max+1)])
		dst = dst[:len(dst)+n]
		if len(dst) > max {
			return dst[:max], ErrBodyTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
