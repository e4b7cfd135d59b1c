package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/stats"
)

// installSecrets checks --secret-header and makes stdout, stderr (wrapped
// by realMain) and every file written from now on (findings, summary.json,
// latency.json) scrub the secret values: those of the secret headers and
// the passwords in the target URLs among urls and the positional
// arguments. It runs right after the flags are parsed, before any message
// could quote a value.
func (t *targetFlags) installSecrets(fs *pflag.FlagSet, stdout, stderr io.Writer, urls ...string) error {
	if err := t.secret.Check(); err != nil {
		return err
	}
	secrets := cli.HeaderSecrets(t.headers, t.secret.Names)
	args := fs.Args()
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		args = args[:dash]
	}
	for _, u := range append(urls, args...) {
		secrets = append(secrets, stats.URLSecrets(u)...)
	}
	cli.InstallSecrets(stdout, stderr, secrets)
	return nil
}
