package main

import (
	"io"

	"github.com/rpcload/rpcload/internal/stats"
)

// stdoutPath is the -o value that sends the result to stdout instead of a
// file, for a pipe (rpcload run ... -o - | jq).
const stdoutPath = "-"

// writeResultTo writes res where -o says: to stdout for "-", else to the file
// (stats.WriteJSONFile: atomically, or in place when the path is not a
// regular file, such as /dev/stdout).
func writeResultTo(path string, res *stats.Result, stdout io.Writer) error {
	if path == stdoutPath {
		return stats.WriteJSON(stdout, res)
	}
	return stats.WriteJSONFile(path, res)
}

// reportTo is where the text report goes: stdout, unless the result goes
// there (-o -), whose reader wants nothing but the JSON; then stderr.
func reportTo(output string, stdout, stderr io.Writer) io.Writer {
	if output == stdoutPath {
		return stderr
	}
	return stdout
}

// outputFile is -o's file, "" when there is none (not given, or stdout).
func outputFile(output string) string {
	if output == stdoutPath {
		return ""
	}
	return output
}
