package hostile

import (
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// ChildEnv is the environment variable that makes a test binary a hostile
// child process: its value is "MODE" or "MODE,cl" (Content-Length framing).
const ChildEnv = "RPCLOAD_HOSTILE_CHILD"

// ChildLifetime bounds how long a hostile child lives, whatever it ignores:
// a test that dies cannot leave it running for long.
const ChildLifetime = 60 * time.Second

// ChildArgs parses the value of ChildEnv.
func ChildArgs(v string) (Mode, bool, error) {
	m, cl := Mode(v), false
	if len(v) > 3 && v[len(v)-3:] == ",cl" {
		m, cl = Mode(v[:len(v)-3]), true
	}
	t := Stdio
	if cl {
		t = StdioCL
	}
	if !Applies(m, t) {
		return "", false, fmt.Errorf("hostile: mode %q does not apply to a child process", v)
	}
	return m, cl, nil
}

// ServeChild makes this process a hostile child in mode m on its stdin and
// stdout (Content-Length framing if cl), for at most lifetime. It returns
// when the mode is done (stdin ended, the connection "reset"); IgnoreTerm,
// CloseStdout and NeverRead only return when lifetime is up. IgnoreTerm
// makes the process ignore SIGTERM for good.
func ServeChild(m Mode, cl bool, stdin io.Reader, stdout, stderr io.WriteCloser, lifetime time.Duration) {
	quit := make(chan struct{})
	timer := time.AfterFunc(lifetime, func() { close(quit) })
	defer timer.Stop()
	linger := func() { <-quit }
	switch m {
	case CloseStdout:
		stdout.Close()
		io.Copy(io.Discard, stdin)
		linger()
		return
	case IgnoreTerm:
		signal.Ignore(syscall.SIGTERM)
		serveStream(stdin, stdout, cl, answersOf(m), quit, nil)
		linger() // stdin is closed: a well-behaved server would exit now
		return
	case StderrFlood:
		go floodStderr(stderr, quit)
	case Reset:
		rr := newRequestReader(stdin, cl)
		rr.next()
		return // the process exits: the child's way of resetting
	}
	serveStream(stdin, stdout, cl, answersOf(m), quit, nil)
	if m == NeverRead {
		linger()
	}
}

// answersOf is the mode whose answers m gives on a stream: the child modes
// answer correctly.
func answersOf(m Mode) Mode {
	switch m {
	case IgnoreTerm, StderrFlood, CloseStdout:
		return ""
	}
	return m
}

// floodStderr writes lines to w as fast as they are read, until a write
// fails or quit is closed; every 64th write is one 1 MiB line.
func floodStderr(w io.Writer, quit <-chan struct{}) {
	var buf []byte
	for n := 0; ; n++ {
		select {
		case <-quit:
			return
		default:
		}
		buf = buf[:0]
		if n%64 == 63 {
			buf = append(append(buf, filler...), filler...)
			for len(buf) < 1<<20 {
				buf = append(buf, filler...)
			}
			buf = append(buf, '\n')
		} else {
			for range 256 {
				buf = append(buf, "hostile: stderr flood line "...)
				buf = strconv.AppendInt(buf, int64(n), 10)
				buf = append(buf, '\n')
			}
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
}
