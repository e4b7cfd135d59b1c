package cli

import (
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/stats"
)

// SecretFlags is --secret-header: headers whose values are secret beyond
// those that are by default (stats.SecretHeader).
type SecretFlags struct {
	Names []string
}

// Register adds --secret-header to fs; scrubbedFrom says what the command
// writes that the secrets are scrubbed from.
func (s *SecretFlags) Register(fs *pflag.FlagSet, scrubbedFrom string) {
	fs.StringArrayVar(&s.Names, "secret-header", nil, "the value of header `NAME` is a secret: it is scrubbed from "+scrubbedFrom+" (repeatable; Authorization, Proxy-Authorization, Cookie and names holding key, token, secret, auth, session ... are secret anyway)")
}

// Check refuses a name that is no header name.
func (s *SecretFlags) Check() error {
	for _, n := range s.Names {
		if !ValidHeaderName(n) {
			return Usagef("--secret-header %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~)", n)
		}
	}
	return nil
}

// HeaderSecrets returns the secret values among curl-style "Name: value"
// headers, extra naming secret headers beyond the default ones. It reads
// them leniently: a header that --header will refuse may still hold a
// secret, and the refusal must not be the message that shows it.
func HeaderSecrets(headers, extra []string) []string {
	h := http.Header{}
	for _, s := range headers {
		if name, value, ok := strings.Cut(s, ":"); ok {
			h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	return stats.SecretValues(h, extra)
}

// InstallSecrets makes stdout, stderr (when they are the
// stats.RedactingWriters main wrapped them in) and every file written from
// now on scrub the secrets.
func InstallSecrets(stdout, stderr io.Writer, secrets []string) {
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

// OSFile returns the file behind w, looking through a redacting wrapper,
// or nil: whether stderr is a terminal decides how progress is drawn.
func OSFile(w io.Writer) *os.File {
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
