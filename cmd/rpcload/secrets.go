package main

import (
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/stats"
)

// secretFlags is --secret-header: headers whose values are secret beyond
// those that are by default (stats.SecretHeader).
type secretFlags struct {
	names []string
}

func (s *secretFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&s.names, "secret-header", nil, "the value of header `NAME` is a secret: it is scrubbed from every report, result file and message (repeatable; Authorization, Proxy-Authorization, Cookie and names holding key, token, secret, auth, session ... are secret anyway)")
}

// check refuses a name that is no header name.
func (s *secretFlags) check() error {
	for _, n := range s.names {
		if n == "" || !validHeaderName(n) {
			return usagef("--secret-header %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~)", n)
		}
	}
	return nil
}

// headerSecrets returns the secret values among curl-style "Name: value"
// headers. It reads them leniently: a header that --header will refuse may
// still hold a secret, and the refusal must not be the message that shows it.
func headerSecrets(headers, extra []string) []string {
	h := http.Header{}
	for _, s := range headers {
		name, value, ok := strings.Cut(s, ":")
		if !ok {
			continue
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return stats.SecretValues(h, extra)
}

// installSecrets makes stdout, stderr (when realMain wrapped them) and
// every file written from now on scrub the secrets.
func installSecrets(stdout, stderr io.Writer, secrets []string) {
	r := stats.NewRedactor(secrets...)
	if !r.Active() {
		return
	}
	for _, w := range []io.Writer{stdout, stderr} {
		if rw, ok := w.(*stats.RedactingWriter); ok {
			rw.SetRedactor(r)
		}
	}
	stats.SetFileRedactor(r)
}

// osFile returns the file behind w, looking through a redacting wrapper,
// or nil: whether stderr is a terminal decides how progress is drawn.
func osFile(w io.Writer) *os.File {
	for {
		switch x := w.(type) {
		case *os.File:
			return x
		case *stats.RedactingWriter:
			w = x.Underlying()
		default:
			return nil
		}
	}
}
