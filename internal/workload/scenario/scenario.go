package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/rpcload/rpcload/internal/workload/gen"
)

// Version is the only version of the format this package reads.
const Version = 1

// maxFileSize bounds a scenario file.
const maxFileSize = 16 << 20

// Scenario is a parsed, validated scenario file. Zero values mean "not
// given": the command line's flags or defaults apply.
type Scenario struct {
	File    string   // the path or name it was read from
	Version int      // always 1
	Target  string   // a target URL (validated like the CLI's TARGET), or ""
	Command []string // a child process's argv, or nil; never both with Target

	Transport Transport
	Profile   Profile

	// Headers are extra HTTP (and WebSocket handshake) headers, with
	// ${VAR} already replaced from the environment. The values are secrets:
	// print them nowhere.
	Headers map[string]string

	// Secrets are the values ${VAR} took from the environment, anywhere in
	// the file: tokens, by the rules of the tools, whatever header carries
	// them. The commands scrub them from every output.
	Secrets []string

	Seed    *uint64                // the seed of every random choice, if given
	Feeders map[string]*gen.Feeder // by name, loaded
	Load    LoadShape
	Mix     []Call // at least one call

	// Lines holds the line of each setting of the load, transport and
	// profile sections and of the seed that the file gives, by its key
	// ("load.rate", "transport.http2", "profile.open", "seed"), so that
	// a problem found later names the setting where the user wrote it.
	Lines map[string]int
}

// Transport holds the transport options of a scenario.
type Transport struct {
	Conns    int           // connections (child processes for a command)
	Framing  string        // "newline" or "content-length" (child processes)
	HTTP2    bool          // HTTP/2 (h2c on plain http)
	Insecure bool          // https: skip certificate verification
	Restart  bool          // child: start a new one when it exits
	MaxFrame int           // largest reply frame or body, bytes
	Grace    time.Duration // child: each shutdown wait
	Stderr   string        // child: append its stderr to this file (absolute path)
}

// Profile is the ecosystem layer of a scenario.
type Profile struct {
	Name      string // "jsonrpc", "mcp", "lsp" or "eth"; "" if not given
	MCPEra    string // mcp: "auto", "modern", "legacy" or a revision date
	Workspace string // lsp: the workspace directory (absolute)
	Open      string // lsp: a file opened on every connection (absolute)
}

// LoadShape is the load section: open loop (Rate, or rate Stages) or
// closed loop (Concurrency, or concurrency Stages). (It is not called Load
// because Load is the function that reads a file.)
type LoadShape struct {
	Rate             float64        // open loop: calls per second
	Concurrency      int            // closed loop: calls in flight
	Duration         time.Duration  // length of the sending phase (not with Stages)
	Timeout          time.Duration  // default per-request timeout
	Drain            *time.Duration // wait for replies after sending; nil if not given
	MaxInFlight      int            // cap on scheduled, unresolved requests
	Stages           []Stage        // all rate stages or all concurrency stages
	StageKind        string         // with Stages: "rate" (open loop) or "concurrency" (closed loop)
	StartRate        float64        // rate stages: the rate the first ramp starts from
	StartConcurrency int            // concurrency stages: the concurrency the first ramp starts from
	Arrival          string         // open loop: "uniform" or "poisson"; "" if not given
}

// Stage is one step of a load shape: over Duration, the rate (or the
// concurrency) moves linearly from the previous stage's target (StartRate
// or StartConcurrency before the first) to this one's.
type Stage struct {
	Duration    time.Duration
	Rate        float64 // rate stages: target calls per second (>= 0)
	Concurrency int     // concurrency stages: target calls in flight (>= 0)
}

// Call is one entry of the mix.
type Call struct {
	Name    string        // unique in the mix; names the call's statistics
	Method  string        // the JSON-RPC method
	Weight  float64       // relative share of the mix, > 0
	Params  *gen.Template // nil when the call has no params
	Notify  bool          // sent as a notification (no id, no reply)
	Batch   int           // > 0: sent as batch arrays of Batch requests
	Timeout time.Duration // per-call timeout; 0: the run's
	IDReuse bool          // the id-reuse probe: reuse an id still in flight
	Expect  Expect
	// Raw is a frame sent as it is (raw:), malformed traffic judged by the
	// fuzz oracle; nil for a call of Method.
	Raw []byte
	// Mutate makes a share of the call's requests malformed (mutate:).
	Mutate *Mutation
}

// Mutation is a call's mutate: the share of its requests made malformed
// and the mutation ops they go through (none: every op that applies).
type Mutation struct {
	Fraction float64
	Ops      []string
}

// Expect is what a call's reply must satisfy; at most one field is set.
type Expect struct {
	ResultEqualsParams bool               // the result equals the params sent (an echo)
	Result             *jsonschema.Schema // the result satisfies this schema
	ResultSchemaJSON   []byte             // Result's source, compact JSON
	ErrorCode          *int64             // the reply is an error with this code
	ResultEquals       []byte             // the result equals this JSON value (compact)
}

// Load reads the scenario file at path. Relative paths inside it (feeders,
// the lsp workspace and file, stderr) are relative to its directory.
// getenv looks up ${VAR} in header values; nil means os.LookupEnv. A
// problem in the file is reported as Errors.
func Load(path string, getenv func(string) (string, bool)) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: %s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("scenario: %s is larger than %d MiB", path, maxFileSize>>20)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(path, data, dir, getenv)
}

// Parse reads a scenario from data. name is used in error positions; dir
// is the directory relative paths are resolved against. getenv looks up
// ${VAR} in header values; nil means os.LookupEnv. Every problem found is
// reported at once, as Errors.
func Parse(name string, data []byte, dir string, getenv func(string) (string, bool)) (*Scenario, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	p := &parser{file: name, dir: dir, data: data, getenv: getenv, nodes: maxNodes}
	root := p.document()
	if root == nil {
		p.errs.sort()
		return nil, p.errs
	}
	s := p.scenario(root)
	if len(p.errs) > 0 {
		p.errs.sort()
		return nil, p.errs
	}
	s.Secrets = p.secrets
	return s, nil
}

// document parses data as exactly one YAML document and returns its root.
func (p *parser) document() *yaml.Node {
	if len(p.data) > maxFileSize {
		p.errs = append(p.errs, Error{File: p.file, Line: 1, Col: 1, Msg: fmt.Sprintf("the file is larger than %d MiB", maxFileSize>>20)})
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(p.data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.errs = append(p.errs, Error{File: p.file, Line: 1, Col: 1, Msg: "the file is empty; expected a mapping starting with version: 1"})
		} else {
			p.syntaxError(err)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		p.errorf(&next, "a scenario file holds one YAML document; this is a second one")
		return nil
	case !errors.Is(err, io.EOF):
		p.syntaxError(err)
		return nil
	}
	if len(doc.Content) != 1 {
		p.errorf(&doc, "the file is empty; expected a mapping starting with version: 1")
		return nil
	}
	return doc.Content[0]
}
