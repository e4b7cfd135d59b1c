package fuzz

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/transport"
)

// printfMax is the largest input a reproducer spells out in a printf line;
// a larger one is read from input.bin.
const printfMax = 512

// reproducers are one-line commands that send the finding's input again:
// rpcfuzz replay, then curl for HTTP, nc for sockets, websocat for
// WebSocket, or the command itself for a child process.
func reproducers(t transport.Target, dir string, c mutate.Case) []string {
	out := []string{"rpcfuzz replay " + ShellQuote(dir)}
	input := filepath.Join(dir, "input.bin")
	switch t.Scheme {
	case transport.HTTP, transport.HTTPS:
		for i := range c.Frames {
			file := input
			if i > 0 {
				file = filepath.Join(dir, "input-"+strconv.Itoa(i+1)+".bin")
			}
			out = append(out, "curl -sS -H 'Content-Type: application/json' --data-binary @"+ShellQuote(file)+" "+ShellQuote(t.URL))
		}
		return out
	case transport.WS, transport.WSS:
		return append(out, "websocat "+ShellQuote(t.URL)+" < "+ShellQuote(input))
	}
	data := streamBytes(t.Framing.String(), c)
	feed := "cat " + ShellQuote(input)
	if len(data) <= printfMax {
		feed = "printf '" + printfEscape(data) + "'"
	}
	switch t.Scheme {
	case transport.TCP, transport.TCPLSP:
		host, port, err := net.SplitHostPort(t.Addr)
		if err != nil {
			return out
		}
		out = append(out, feed+" | nc "+ShellQuote(host)+" "+port)
	case transport.Unix, transport.UnixLSP:
		out = append(out, feed+" | nc -U "+ShellQuote(t.Addr))
	case transport.Stdio:
		quoted := make([]string, len(t.Command))
		for i, a := range t.Command {
			quoted[i] = ShellQuote(a)
		}
		out = append(out, feed+" | "+strings.Join(quoted, " "))
	}
	return out
}

// printfEscape writes b as a printf format that prints exactly b: octal
// escapes for everything outside printable ASCII, and for the quote, the
// backslash and the percent sign.
func printfEscape(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		switch {
		case c == '\n':
			s.WriteString(`\n`)
		case c == '\r':
			s.WriteString(`\r`)
		case c == '\t':
			s.WriteString(`\t`)
		case c == '%':
			s.WriteString("%%")
		case c == '\\' || c == '\'' || c < 0x20 || c >= 0x7f:
			s.WriteByte('\\')
			s.WriteByte('0' + c>>6)
			s.WriteByte('0' + c>>3&7)
			s.WriteByte('0' + c&7)
		default:
			s.WriteByte(c)
		}
	}
	return s.String()
}

// ShellQuote quotes s for a POSIX shell when it needs it (reproducers, and
// the command line rpcload kubernetes records in its manifests).
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
