package scenario

import (
	"errors"
	"strings"
	"testing"
)

// parseErrs parses src and returns its problems (failing if there are none).
func parseErrs(t *testing.T, src string, getenv func(string) (string, bool)) Errors {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "rows.csv", "address,n\n0xab,1\n0xcd,2\n")
	_, err := Parse("s.yaml", []byte(src), dir, getenv)
	if err == nil {
		t.Fatalf("Parse accepted:\n%s", src)
	}
	var list Errors
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("Parse returned %T %v, want Errors", err, err)
	}
	return list
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name, src string
		at        string // "line:col" of the expected problem
		msg       string // a substring of its message
	}{
		{"empty", "", "1:1", "the file is empty"},
		{"comments only", "# nothing\n", "1:1", "the file is empty"},
		{"not a mapping", "- a\n", "1:1", "scenario: expected a mapping, got a list"},
		{"syntax", "version: 1\nmix: [\n", "2:1", "YAML syntax"},
		{"tab indent", "version: 1\nmix:\n\t- method: a\n", "3:1", "YAML syntax"},
		{"two documents", "version: 1\nmix: [{method: a}]\n---\nversion: 1\n", "3:1", "one YAML document"},
		{"no version", "mix: [{method: a}]\n", "1:1", "missing version"},
		{"version 2", "version: 2\nmix: [{method: a}]\n", "1:10", "unsupported version 2"},
		{"version string", "version: \"1\"\nmix: [{method: a}]\n", "1:10", "version: expected an integer, got a string"},
		{"unknown key", "version: 1\ntransprt: {}\nmix: [{method: a}]\n", "2:1", `unknown key "transprt"; did you mean transport?`},
		{"duplicate key", "version: 1\nmix: [{method: a}]\nmix: [{method: b}]\n", "3:1", `key "mix" appears twice (first at line 2)`},
		{"merge key", "version: 1\nx: &x {method: a}\nmix: [{<<: *x}]\n", "2:1", `unknown key "x"`},
		{"merge key in call", "version: 1\nmix:\n  - &c {method: a}\n  - {<<: *c, name: b}\n", "4:6", "merge keys (<<) are not supported"},
		{"no mix", "version: 1\n", "1:1", "missing mix"},
		{"empty mix", "version: 1\nmix: []\n", "2:6", "at least one call"},
		{"target and command", "version: 1\ntarget: tcp://h:1\ncommand: [x]\nmix: [{method: a}]\n", "3:1", "target and command exclude each other"},
		{"bad target", "version: 1\ntarget: 127.0.0.1:8545\nmix: [{method: a}]\n", "2:9", "has no scheme"},
		{"empty command", "version: 1\ncommand: []\nmix: [{method: a}]\n", "2:10", "empty list"},
		{"command not strings", "version: 1\ncommand: [node, [x]]\nmix: [{method: a}]\n", "2:17", "command[1]: expected a string, got a list"},
		{"conns 0", "version: 1\ntransport: {conns: 0}\nmix: [{method: a}]\n", "2:20", "transport.conns: 0 is out of range (expected 1 to"},
		{"framing", "version: 1\ntransport: {framing: lsp}\nmix: [{method: a}]\n", "2:22", `"lsp" is not one of newline, content-length`},
		{"http2 yes", "version: 1\ntransport: {http2: yes}\nmix: [{method: a}]\n", "2:20", `expected true or false, got the string "yes"`},
		{"max_frame", "version: 1\ntransport: {max_frame: 16XB}\nmix: [{method: a}]\n", "2:24", "is not a positive size"},
		{"max_frame huge", "version: 1\ntransport: {max_frame: 2000GiB}\nmix: [{method: a}]\n", "2:24", "too large"},
		{"grace number", "version: 1\ntransport: {grace: 2}\nmix: [{method: a}]\n", "2:20", `expected a duration such as "30s"`},
		{"profile unknown", "version: 1\nprofile: soap\nmix: [{method: a}]\n", "2:10", `"soap" is not one of jsonrpc, mcp, lsp, eth`},
		{"profile no name", "version: 1\nprofile: {mcp_era: auto}\nmix: [{method: a}]\n", "2:10", "profile: missing name"},
		{"profile era wrong profile", "version: 1\nprofile: {name: lsp, mcp_era: auto}\nmix: [{method: a}]\n", "2:22", "profile.mcp_era: applies to the mcp profile only"},
		{"profile bad era", "version: 1\nprofile: {name: mcp, mcp_era: 1999-01-01}\nmix: [{method: a}]\n", "2:31", "unknown MCP era"},
		{"profile open missing", "version: 1\nprofile: {name: lsp, open: nope.go}\nmix: [{method: a}]\n", "2:28", "nope.go is not a readable file"},
		{"profile workspace not dir", "version: 1\nprofile: {name: lsp, workspace: rows.csv}\nmix: [{method: a}]\n", "2:33", "is not a directory"},
		{"header name", "version: 1\nheaders: {\"a b\": x}\nmix: [{method: a}]\n", "2:11", `"a b" is not a valid header name`},
		{"header twice", "version: 1\nheaders: {X-A: a, x-a: b}\nmix: [{method: a}]\n", "2:19", "x-a is given twice (first at line 2"},
		{"header not string", "version: 1\nheaders: {X-A: 5}\nmix: [{method: a}]\n", "2:16", "headers.X-A: expected a string"},
		{"header env missing", "version: 1\nheaders: {Authorization: \"Bearer ${NOPE_TOKEN}\"}\nmix: [{method: a}]\n", "2:26", "environment variable NOPE_TOKEN is not set"},
		{"header env unterminated", "version: 1\nheaders: {X-A: \"${A\"}\nmix: [{method: a}]\n", "2:16", "unterminated ${"},
		{"header env bad name", "version: 1\nheaders: {X-A: \"${1A}\"}\nmix: [{method: a}]\n", "2:16", "holds no variable name"},
		{"seed negative", "version: 1\nseed: -1\nmix: [{method: a}]\n", "2:7", "seed: -1 is out of range"},
		{"seed float", "version: 1\nseed: 1.5\nmix: [{method: a}]\n", "2:7", "seed: expected an integer"},
		{"feeder no file", "version: 1\nfeeders: {a: {mode: random}}\nmix: [{method: a}]\n", "2:14", "feeders.a: missing file"},
		{"feeder missing file", "version: 1\nfeeders: {a: {file: nope.csv}}\nmix: [{method: a, params: [{$feed: a.x}]}]\n", "2:21", "nope.csv"},
		{"feeder mode", "version: 1\nfeeders: {a: {file: rows.csv, mode: shuffle}}\nmix: [{method: a}]\n", "2:37", `"shuffle" is not one of sequential, random, once`},
		{"feeder name", "version: 1\nfeeders: {a.b: {file: rows.csv}}\nmix: [{method: a}]\n", "2:11", `"a.b" is not a valid feeder name`},
		{"rate negative", "version: 1\nload: {rate: -5}\nmix: [{method: a}]\n", "2:14", "load.rate: -5 is out of range (expected a number greater than 0)"},
		{"rate and concurrency", "version: 1\nload: {rate: 5, concurrency: 2}\nmix: [{method: a}]\n", "2:17", "exclude each other"},
		{"rate with stages", "version: 1\nload: {rate: 5, stages: [{duration: 1s, rate: 1}]}\nmix: [{method: a}]\n", "2:8", "load.rate: stages set the rate over time themselves"},
		{"duration with stages", "version: 1\nload:\n  duration: 1m\n  stages: [{duration: 1s, rate: 1}]\nmix: [{method: a}]\n", "3:3", "load.duration: stages set the length of the run"},
		{"stages mixed", "version: 1\nload:\n  stages:\n    - {duration: 1s, rate: 1}\n    - {duration: 1s, concurrency: 2}\nmix: [{method: a}]\n", "5:22", "stages mix rate and concurrency (stage at line 4 has rate)"},
		{"stage both", "version: 1\nload:\n  stages:\n    - {duration: 1s, rate: 1, concurrency: 2}\nmix: [{method: a}]\n", "4:31", "a rate or a concurrency, not both"},
		{"stage no target", "version: 1\nload:\n  stages:\n    - {duration: 1s}\nmix: [{method: a}]\n", "4:7", "missing rate or concurrency"},
		{"stage no duration", "version: 1\nload:\n  stages:\n    - {rate: 1}\nmix: [{method: a}]\n", "4:7", "load.stages[0]: missing duration"},
		{"stages all zero", "version: 1\nload:\n  stages:\n    - {duration: 1s, rate: 0}\nmix: [{method: a}]\n", "4:5", "every stage's rate is 0"},
		{"stage negative", "version: 1\nload:\n  stages:\n    - {duration: 1s, rate: -1}\nmix: [{method: a}]\n", "4:28", "load.stages[0].rate: -1 is out of range (expected a number of at least 0)"},
		{"rate too high", "version: 1\nload: {rate: 2e7}\nmix: [{method: a}]\n", "2:14", "above the supported 10000000 calls per second"},
		{"max_frame tiny", "version: 1\ntransport: {max_frame: 10}\nmix: [{method: a}]\n", "2:24", "10 bytes is too small"},
		{"command null arg", "version: 1\ncommand: [a, ~]\nmix: [{method: a}]\n", "2:14", "command[1]: expected a string, got null"},
		{"start_concurrency with rate stages", "version: 1\nload: {start_concurrency: 1, stages: [{duration: 1s, rate: 1}]}\nmix: [{method: a}]\n", "2:8", "applies to concurrency stages only"},
		{"start_rate without stages", "version: 1\nload: {rate: 5, start_rate: 1}\nmix: [{method: a}]\n", "2:17", "applies to rate stages only"},
		{"arrival closed loop", "version: 1\nload: {concurrency: 5, arrival: poisson}\nmix: [{method: a}]\n", "2:24", "applies to open loop (rate) only"},
		{"arrival unknown", "version: 1\nload: {rate: 5, arrival: burst}\nmix: [{method: a}]\n", "2:26", `"burst" is not one of uniform, poisson`},
		{"duration zero", "version: 1\nload: {duration: 0s}\nmix: [{method: a}]\n", "2:18", "load.duration: 0s must be greater than 0"},
		{"drain negative", "version: 1\nload: {drain: -1s}\nmix: [{method: a}]\n", "2:15", "must not be negative"},
		{"duration garbage", "version: 1\nload: {timeout: soon}\nmix: [{method: a}]\n", "2:17", `"soon" is not a duration`},
		{"max_inflight", "version: 1\nload: {max_inflight: 0}\nmix: [{method: a}]\n", "2:22", "load.max_inflight: 0 is out of range (expected at least 1)"},
		{"call not mapping", "version: 1\nmix: [eth_call]\n", "2:7", "mix[0]: expected a mapping, got a string"},
		{"no method", "version: 1\nmix: [{name: a}]\n", "2:7", "mix[0]: missing method"},
		{"empty method", "version: 1\nmix: [{method: \"\"}]\n", "2:16", "mix[0].method: must not be empty"},
		{"call unknown key", "version: 1\nmix: [{method: a, wieght: 2}]\n", "2:19", `unknown key "wieght"; did you mean weight?`},
		{"weight 0", "version: 1\nmix: [{method: a, weight: 0}]\n", "2:27", "mix[0] (a).weight: 0 is out of range (expected a number greater than 0)"},
		{"weight nan", "version: 1\nmix: [{method: a, weight: .nan}]\n", "2:27", "expected a finite number"},
		{"duplicate name", "version: 1\nmix:\n  - method: a\n  - method: a\n", "4:13", `the call name "a" is already used by the call at line 3`},
		{"duplicate explicit name", "version: 1\nmix:\n  - {method: a, name: x}\n  - {method: b, name: x}\n", "4:23", `"x" is already used`},
		{"params scalar", "version: 1\nmix: [{method: a, params: 5}]\n", "2:27", "params: expected a list or a mapping (JSON-RPC params are an array or an object), got an integer"},
		{"params null", "version: 1\nmix: [{method: a, params: null}]\n", "2:27", "leave params out for none"},
		{"params scalar generator", "version: 1\nmix: [{method: a, params: {$int: [1, 2]}}]\n", "2:28", "$int makes a single value"},
		{"params bad generator", "version: 1\nmix:\n  - method: a\n    params:\n      x: [1, {$int: [5, 1]}]\n", "5:21", "mix[0] (a).params.x[1].$int:"},
		{"params unknown generator", "version: 1\nmix:\n  - method: a\n    params: {x: {$intt: 1}}\n", "4:25", "$intt"},
		{"params unknown feeder", "version: 1\nmix:\n  - method: a\n    params: [{$feed: nope.x}]\n", "4:22", "nope"},
		{"params unknown column", "version: 1\nfeeders: {r: {file: rows.csv}}\nmix:\n  - method: a\n    params: [{$feed: r.nope}]\n", "5:22", "nope"},
		{"params infinity", "version: 1\nmix: [{method: a, params: [.inf]}]\n", "2:28", "not a JSON number"},
		{"params custom tag", "version: 1\nmix: [{method: a, params: [!foo 1]}]\n", "2:28", `unsupported YAML tag "!foo"`},
		{"params duplicate key", "version: 1\nmix: [{method: a, params: {x: 1, x: 2}}]\n", "2:34", `key "x" appears twice`},
		{"params alias cycle", "version: 1\nmix: [{method: a, params: &p [*p]}]\n", "2:31", "refers to a value that contains it"},
		{"notify with expect", "version: 1\nmix: [{method: a, notify: true, expect: {error_code: 1}}]\n", "2:33", "a notification gets no reply"},
		{"notify with id_reuse", "version: 1\nmix: [{method: a, notify: true, id_reuse: true}]\n", "2:33", "a notification has no id to reuse"},
		{"notify with batch", "version: 1\nmix: [{method: a, notify: true, batch: 4}]\n", "2:33", "a batch of notifications gets no reply"},
		{"batch 0", "version: 1\nmix: [{method: a, batch: 0}]\n", "2:26", "batch: 0 is out of range (expected 1 to 100000)"},
		{"batch mcp", "version: 1\nprofile: mcp\nmix: [{method: a, batch: 2}]\n", "3:19", "the mcp profile sends no batches"},
		{"id_reuse batch", "version: 1\nmix: [{method: a, batch: 2, id_reuse: true}]\n", "2:29", "sends single requests, not batches"},
		{"id_reuse expect", "version: 1\nmix: [{method: a, id_reuse: true, expect: {error_code: 1}}]\n", "2:35", "id-reuse probe's outcome is reported on its own"},
		{"two expectations", "version: 1\nmix:\n  - method: a\n    expect:\n      error_code: -32601\n      result_equals: 1\n", "6:7", "holds one expectation, but has both error_code and result_equals"},
		{"expect unknown", "version: 1\nmix: [{method: a, expect: {code: 1}}]\n", "2:28", `unknown key "code"`},
		{"echo without params", "version: 1\nmix: [{method: a, expect: {result_equals_params: true}}]\n", "2:19", "result_equals_params needs params"},
		{"error_code float", "version: 1\nmix: [{method: a, expect: {error_code: -32601.5}}]\n", "2:40", "expected an integer, got a number"},
		{"no method nor raw", "version: 1\nmix: [{name: a}]\n", "2:7", "missing method (the JSON-RPC method to call), or raw"},
		{"raw with method", "version: 1\nmix: [{raw: x, method: a}]\n", "2:16", "mix[0].method: a raw call sends its frame as it is, without method"},
		{"raw with mutate", "version: 1\nmix: [{raw: x, mutate: {fraction: 1}}]\n", "2:16", "without mutate"},
		{"raw empty", "version: 1\nmix: [{raw: ''}]\n", "2:13", "the frame is empty"},
		{"raw number", "version: 1\nmix: [{raw: 5}]\n", "2:13", "expected a string, got an integer"},
		{"raw bad base64", "version: 1\nmix: [{raw: {base64: '%%%'}}]\n", "2:22", "raw.base64: illegal base64 data"},
		{"raw unknown key", "version: 1\nmix: [{raw: {hex: '00'}}]\n", "2:14", `unknown key "hex"`},
		{"mutate no fraction", "version: 1\nmix: [{method: a, mutate: {ops: [x]}}]\n", "2:27", "missing fraction"},
		{"mutate fraction 0", "version: 1\nmix: [{method: a, mutate: {fraction: 0}}]\n", "2:38", "must be above 0 and at most 1"},
		{"mutate fraction 150%", "version: 1\nmix: [{method: a, mutate: {fraction: 150%}}]\n", "2:38", "must be above 0 and at most 1 (100%), got 1.5"},
		{"mutate fraction text", "version: 1\nmix: [{method: a, mutate: {fraction: lots%}}]\n", "2:38", `"lots%" is not a percentage`},
		{"mutate batch", "version: 1\nmix: [{method: a, batch: 2, mutate: {fraction: 1}}]\n", "2:29", "mutate takes single requests"},
		{"schema not mapping", "version: 1\nmix: [{method: a, expect: {result: [1]}}]\n", "2:36", "expected a JSON Schema (a mapping, or true or false), got a list"},
		{"schema bad keyword", "version: 1\nmix:\n  - method: a\n    expect:\n      result:\n        type: object\n        properties:\n          x: {minimum: low}\n", "8:24", "invalid JSON Schema at /properties/x/minimum"},
		{"schema bad type", "version: 1\nmix:\n  - method: a\n    expect:\n      result: {type: objekt}\n", "5:22", "invalid JSON Schema at /type"},
		{"schema external ref", "version: 1\nmix:\n  - method: a\n    expect:\n      result: {$ref: \"file:///etc/passwd\"}\n", "5:15", "invalid JSON Schema"},
		{"too many timeouts", "version: 1\nload: {timeout: 1s}\nmix:\n" +
			"  - {method: a, timeout: 2s}\n  - {method: b, timeout: 3s}\n  - {method: c, timeout: 4s}\n  - {method: d, timeout: 5s}\n" +
			"  - {method: e, timeout: 6s}\n  - {method: f, timeout: 7s}\n  - {method: g, timeout: 8s}\n  - {method: h, timeout: 2s}\n  - {method: i, timeout: 9s}\n",
			"12:26", "more than 8 distinct timeouts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list := parseErrs(t, tc.src, noEnv)
			for _, e := range list {
				if e.File != "s.yaml" {
					t.Errorf("file %q, want s.yaml", e.File)
				}
				at := itoa(e.Line) + ":" + itoa(e.Col)
				if at == tc.at && strings.Contains(e.Msg, tc.msg) {
					want := "s.yaml:" + tc.at + ": "
					if !strings.HasPrefix(e.Error(), want) {
						t.Errorf("Error() = %q, want prefix %q", e.Error(), want)
					}
					return
				}
			}
			t.Errorf("no problem at %s containing %q; got:\n%v", tc.at, tc.msg, list)
		})
	}
}
