package cli

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
)

// Largest sizes ParseSize accepts (less where int is 32 bits wide, where a
// larger size would wrap around): rpcload's, and rpcfuzz's, whose frames are
// generated, mutated and judged whole in memory.
const (
	MaxReadSize = min(1<<40, math.MaxInt)
	MaxFuzzSize = min(1<<34, math.MaxInt)
)

// ParseSize reads a byte count with an optional KiB/MiB/GiB (or KB/MB/GB,
// or B) suffix, at most limit bytes. Errors quote s and name no flag.
func ParseSize(s string, limit int) (int, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size like 16MiB", s)
	}
	if n > int64(limit)/mult {
		return 0, fmt.Errorf("%q is too large (%s at most)", s, sizeName(limit))
	}
	return int(n * mult), nil
}

// sizeName writes a limit the way a user would: in whole GiB or TiB.
func sizeName(n int) string {
	switch {
	case n%(1<<40) == 0:
		return strconv.Itoa(n>>40) + " TiB"
	case n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + " GiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// Headers parses the curl-style "Name: value" headers of --header for
// target t, or returns nil when there are none. Every error is a usage
// error naming --header; none quotes a value, nor a name that may be one
// (a missing colon): values are often secrets. Headers are counted from 1
// in the order given. A zero t (a replay whose target is the finding's
// own, not known yet) is not checked against.
func Headers(hs []string, t transport.Target) (http.Header, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	switch t.Scheme {
	case "", transport.HTTP, transport.HTTPS, transport.WS, transport.WSS:
	default:
		return nil, Usagef("--header applies to http(s) and ws(s) targets only, not %s", t.Scheme)
	}
	h, err := ParseHeaders(hs)
	if err != nil {
		return nil, Usagef("--header: %v", err)
	}
	return h, nil
}

// ParseHeaders reads curl-style "Name: value" headers, refusing any that
// net/http would refuse to send (which would fail every request). Errors
// name no flag and quote no value.
func ParseHeaders(hs []string) (http.Header, error) {
	h := http.Header{}
	for i, s := range hs {
		name, value, ok := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("header %d has no ':' between a name and a value (write 'Name: value')", i+1)
		case name == "":
			return nil, fmt.Errorf("header %d has no name before its ':' (write 'Name: value')", i+1)
		case strings.ContainsAny(name, " \t\r\n"):
			return nil, fmt.Errorf("header %d: the name before the first ':' holds a space or a line break (write 'Name: value')", i+1)
		case !ValidHeaderName(name):
			return nil, fmt.Errorf("header %d: name %q has characters not allowed in an HTTP header name", i+1, name)
		case strings.ContainsAny(value, "\r\n"):
			return nil, fmt.Errorf("header %q: value contains a line break", name)
		}
		value = strings.TrimSpace(value)
		if !validHeaderValue(value) {
			return nil, fmt.Errorf("header %q: value contains a control character", name)
		}
		h.Add(name, value)
	}
	return h, nil
}

// ValidHeaderName reports whether name is an RFC 9110 token; net/http
// refuses to send any other name.
func ValidHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v has no control characters but tab,
// as net/http requires of the values it sends.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// TLSFlags are --insecure, --ca-cert, --client-cert and --client-key.
type TLSFlags struct {
	Insecure                      bool
	CACert, ClientCert, ClientKey string
}

// Register adds the TLS flags to fs; insecureNote says where a run with
// --insecure says so.
func (f *TLSFlags) Register(fs *pflag.FlagSet, insecureNote string) {
	fs.BoolVar(&f.Insecure, "insecure", false, "https, wss: do not verify the server's certificate ("+insecureNote+")")
	fs.StringVar(&f.CACert, "ca-cert", "", "https, wss: trust only the certificate authorities in this PEM file (instead of the system's)")
	fs.StringVar(&f.ClientCert, "client-cert", "", "https, wss: present this PEM client certificate (with its key, or --client-key)")
	fs.StringVar(&f.ClientKey, "client-key", "", "https, wss: the PEM private key of --client-cert")
}

// Load refuses a TLS flag given on the command line for a target without
// TLS (a zero t is not checked against, as in Headers) and reads the files
// the flags name; errors are usage errors.
func (f *TLSFlags) Load(fs *pflag.FlagSet, t transport.Target) (transport.TLS, error) {
	if t.Scheme != "" && t.Scheme != transport.HTTPS && t.Scheme != transport.WSS {
		for _, name := range []string{"insecure", "ca-cert", "client-cert", "client-key"} {
			if fs.Changed(name) {
				return transport.TLS{}, Usagef("--%s applies to https:// and wss:// targets only, not %s", name, t.URL)
			}
		}
	}
	c, err := transport.LoadTLS(f.Insecure, f.CACert, f.ClientCert, f.ClientKey)
	if err != nil {
		return c, Usagef("%v", err)
	}
	return c, nil
}

// ChildFraming is the framing of a child process given after --: the
// --framing flag's value when given (name says how the user wrote it),
// else the profile's (LSP servers speak Content-Length on stdio), else
// newline.
func ChildFraming(value string, given bool, prof profile.Name, name string) (transport.Framing, error) {
	if !given && prof == profile.LSP {
		return transport.ContentLength, nil
	}
	switch value {
	case "newline":
		return transport.Newline, nil
	case "content-length":
		return transport.ContentLength, nil
	}
	return 0, fmt.Errorf("%s must be newline or content-length (got %q)", name, value)
}
