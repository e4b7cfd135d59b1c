package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/stats"
)

// FuzzArgs feeds arbitrary command lines to the flag parsing and
// validation of rpcfuzz run, replay, minimize and import-go, stopping
// before anything is sent or written: no panic, and every refusal is a
// usage error (exit 2) with a message.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{
		"tcp://127.0.0.1:1\x00--out\x00o",
		"http://u:p@127.0.0.1:1/\x00--out\x00o\x00-H\x00Authorization: Bearer x\x00--secret-header\x00X-A",
		"--out\x00o\x00--\x00srv\x00--flag",
		"tcp://a:1\x00--out\x00o\x00--max-frame\x009GiB\x00--seed\x00-1\x00--workers\x000",
		"tcp://a:1\x00--out\x00o\x00--duration\x000s\x00--execs\x000",
		"finding\x00--target\x00ws://[::1\x00--timeout\x00-1s",
		"finding\x00--framing\x00xml\x00--\x00x",
		"--profile\x00soap\x00x",
	} {
		f.Add(uint8(0), s)
		f.Add(uint8(1), s)
	}
	f.Chdir(f.TempDir())
	f.Fuzz(func(t *testing.T, which uint8, joined string) {
		args := strings.Split(joined, "\x00")
		if len(args) > 40 || len(joined) > 2000 {
			return
		}
		for _, a := range args {
			if strings.Contains(a, "baseline") {
				return // reads a file named anywhere
			}
		}
		defer stats.SetFileRedactor(nil)
		var out, errOut bytes.Buffer
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.SetOutput(&errOut)
		var err error
		switch which % 4 {
		case 0:
			var rf runFlags
			rf.register(fs)
			if err = fs.Parse(args); err == nil {
				if err = rf.tf.installSecrets(fs, &out, &errOut); err == nil {
					_, err = rf.config(fs)
				}
			}
		default: // replay, minimize, import-go share their target flags
			var ff findingFlags
			ff.register(fs)
			if err = fs.Parse(args); err == nil {
				if err = ff.tf.installSecrets(fs, &out, &errOut, ff.target); err == nil {
					_, err = ff.options(fs)
				}
			}
		}
		if err == nil || errors.Is(err, pflag.ErrHelp) {
			return
		}
		if err.Error() == "" {
			t.Fatalf("%q: an empty error", args)
		}
		var ue cli.UsageError
		if fs.Parsed() && !errors.As(err, &ue) && !strings.Contains(err.Error(), "flag") && !strings.Contains(err.Error(), "argument") {
			t.Errorf("%q: %v is not a usage error (exit 2)", args, err)
		}
	})
}
