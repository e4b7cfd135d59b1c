package main

import (
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/stats"
)

// installSecrets checks --secret-header and makes stdout, stderr (wrapped
// by realMain) and every file written from now on (findings, summary.json,
// latency.json) scrub the secret values: those of the secret headers and
// the passwords in the target URLs among urls and the positional
// arguments. It runs right after the flags are parsed, before any message
// could quote a value.
func (t *targetFlags) installSecrets(fs *pflag.FlagSet, stdout, stderr io.Writer, urls ...string) error {
	for _, n := range t.secretHeaders {
		if n == "" || strings.ContainsAny(n, " \t\r\n:") {
			return usagef("--secret-header %q is not a header name", n)
		}
	}
	h := http.Header{}
	for _, s := range t.headers {
		if name, value, ok := strings.Cut(s, ":"); ok {
			h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	secrets := stats.SecretValues(h, t.secretHeaders)
	args := fs.Args()
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		args = args[:dash]
	}
	for _, u := range append(urls, args...) {
		secrets = append(secrets, stats.URLSecrets(u)...)
	}
	r := stats.NewRedactor(secrets...)
	if !r.Active() {
		return nil
	}
	for _, w := range []io.Writer{stdout, stderr} {
		if rw, ok := w.(*stats.RedactingWriter); ok {
			rw.SetRedactor(r)
		}
	}
	stats.SetFileRedactor(r)
	return nil
}

// osFile returns the file behind w, looking through a redacting wrapper,
// or nil.
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
