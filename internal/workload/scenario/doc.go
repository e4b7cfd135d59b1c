// Package scenario reads scenario files: YAML documents that describe a
// whole load test (the target, transport and profile options, headers, data
// feeders, the load shape and a weighted mix of calls with parameter
// templates and reply expectations), as documented in docs/scenarios.md.
//
// The format is strict. Parse checks every key and reports every problem it
// finds at once, as an [Errors] list sorted by position, each entry carrying
// the file, line and column of the offending key or value and what was
// expected there. A successful parse yields a [Scenario]: plain data with
// durations, sizes and paths resolved, header values expanded from the
// environment, feeders loaded, params templates compiled (package gen) and
// result schemas compiled (JSON Schema draft 2020-12).
//
// The package does no networking and starts no process; it reads the
// scenario file, the feeder files it names and, for the lsp profile, checks
// that the workspace and the opened file exist.
package scenario
