package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
)

// cmdHelp is a subcommand's help, in the one style every subcommand's
// --help prints: its usage lines, what it does, its flags (from the flag
// set), and examples.
type cmdHelp struct {
	usage    []string // each a whole command line: "rpcload compare A.json B.json [...]"
	about    string   // what the command does, in sentences; blank lines separate paragraphs
	examples []string // command lines, with an optional "# comment"
}

// write prints the help: on stdout, since the user asked for it.
func (h cmdHelp) write(w io.Writer, fs *pflag.FlagSet) {
	var b strings.Builder
	for i, u := range h.usage {
		if i == 0 {
			b.WriteString("usage: " + u + "\n")
		} else {
			b.WriteString("       " + u + "\n")
		}
	}
	b.WriteString("\n" + strings.TrimSpace(h.about) + "\n")
	if flags := fs.FlagUsages(); flags != "" {
		b.WriteString("\nflags:\n" + flags)
	}
	if len(h.examples) > 0 {
		b.WriteString("\nexamples:\n")
		for _, e := range h.examples {
			b.WriteString("  " + e + "\n")
		}
	}
	fmt.Fprint(w, b.String())
}

// newFlagSet makes a subcommand's flag set: parse errors are returned, not
// printed, flags keep the order they were registered in, and --help (-h)
// prints h on stdout.
func newFlagSet(name string, h cmdHelp, stdout, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() { h.write(stdout, fs) }
	return fs
}

// errHelpShown is what parseFlags returns after printing the help: the
// command is done, and exits 0.
var errHelpShown = errors.New("help shown")

// parseFlags parses a subcommand's arguments. It returns errHelpShown when
// --help was given (the help is printed), a usage error when the flags are
// wrong.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelpShown
		}
		return cli.UsageError{Err: fmt.Errorf("%w (see rpcload %s --help)", err, fs.Name())}
	}
	return nil
}

// helpExit turns parseFlags' error into the command's exit: 0 after the
// help, 2 for a usage error.
func helpExit(err error) (int, error) {
	if errors.Is(err, errHelpShown) {
		return exitOK, nil
	}
	return exitUsage, err
}
