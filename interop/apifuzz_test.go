package interop

// API-aware fuzzing of the real servers (issue 18): told a server's API,
// rpcfuzz calls every method with params its schema accepts and params
// it rejects, and holds the replies to the schemas
// (docs/fuzzing.md, Fuzz your own API). The servers:
//
//   - go-ethereum's rpc.Server (startGeth) over HTTP with --profile eth and
//     testdata/geth-openrpc.json, an OpenRPC document of its test services
//     written by hand from their Go methods (geth has no rpc.discover);
//   - mcp-go (servers/mcpgo) over stdio, its tools from tools/list;
//   - the go-sdk (servers/gosdk -stateless) over Streamable HTTP, likewise;
//   - server-everything over Streamable HTTP in a legacy session opened by
//     hand, as TestFuzzEverything runs it: its tools, prompts and
//     resources from the lists.
//
// (gopls, over LSP: apifuzz_gopls_test.go.) Each run is fuzzTarget.run of
// fuzz_test.go with the API's flags, for 15 s (CI); the opt-in long run
// sets RPCLOAD_INTEROP_API_FUZZ_DURATION (scripts/api-fuzz-real-servers.sh:
// 2m). Each has its baseline, testdata/fuzz-baselines/api-<name>.txt,
// read with the baseline of the same server's envelope run: the API run
// mutates the corpus too (half its inputs), so the deviations of the
// server's JSON-RPC layer documented there turn up here as well, and the
// api- file documents what the API adds. The API's oracles report
// warnings (invalid_params_accepted, params_error_code,
// valid_params_rejected, internal_error): the envelope runs log warnings,
// these runs hold them to the #accept lines like failures, so that every
// finding is explained in the baseline file.
//
// Each run must really be API-aware: summary.json's "api" must list the
// methods (or tools, prompts) the server is known to have, each called
// (with valid and with invalid params, from apiMinCalls calls on) and
// reached (answered with a result, or an error other than -32601), so a
// run that fell back to envelope fuzzing (discovery failed, the document
// did not load) fails.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// The API runs' duration and its knob.
const (
	apiFuzzDuration    = 15 * time.Second
	apiFuzzDurationEnv = "RPCLOAD_INTEROP_API_FUZZ_DURATION"
)

// apiMinCalls is the fewest calls of a method from which it must have had
// both valid and invalid params. rpcfuzz draws one or the other by a coin
// for each fresh call, so with n calls the odds of one kind alone are
// 2^-(n-1): 1 in 2,000 at 12. A slow server on a loaded machine
// (server-everything: 18 methods sharing some 60 inputs a second, a
// quarter of that beside six busy processes) may give a method fewer.
const apiMinCalls = 12

// fuzzAPI is what makes a fuzzTarget an API-aware run.
type fuzzAPI struct {
	// envelope names the baseline of the same server's envelope run
	// (fuzz_test.go), whose #accept lines and ids apply too.
	envelope string
	// methods are the names summary.json's "api" must list, exactly: a
	// method, "tool NAME" or "prompt NAME".
	methods []string
}

// apiCoverage is summary.json's "api" (internal/fuzz.APICoverage).
type apiCoverage struct {
	Methods []struct {
		Name          string            `json:"name"`
		Kind          string            `json:"kind"`
		Source        string            `json:"source"`
		CallsValid    uint64            `json:"calls_valid"`
		CallsInvalid  uint64            `json:"calls_invalid"`
		CallsUnjudged uint64            `json:"calls_unjudged"`
		Results       uint64            `json:"results"`
		NoReply       uint64            `json:"no_reply"`
		ErrorsByCode  map[string]uint64 `json:"errors_by_code"`
		Findings      []string          `json:"findings"`
	} `json:"methods"`
	NeverReached []string `json:"never_reached"`
	Notes        []string `json:"notes"`
}

// apiOracleRule reports whether rule is one of the API's oracles.
func apiOracleRule(rule string) bool {
	switch rule {
	case "invalid_params_accepted", "params_error_code", "valid_params_rejected", "internal_error",
		"result_schema_mismatch", "idempotent_mismatch":
		return true
	}
	return false
}

// baseline returns own with the envelope run's #accept lines and ids
// added, and merged set to a file of all the ids for rpcfuzz --baseline.
func (a *fuzzAPI) baseline(t *testing.T, own fuzzBaseline) fuzzBaseline {
	t.Helper()
	env := readFuzzBaseline(t, a.envelope)
	own.accept = append(own.accept, env.accept...)
	var b strings.Builder
	for id, comment := range own.ids {
		fmt.Fprintf(&b, "%s  # %s\n", id, comment)
	}
	for id, comment := range env.ids {
		if _, dup := own.ids[id]; !dup {
			own.ids[id] = comment + " (" + env.path + ")"
			fmt.Fprintf(&b, "%s  # %s\n", id, comment)
		}
	}
	own.merged = filepath.Join(t.TempDir(), "baseline.txt")
	if err := os.WriteFile(own.merged, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return own
}

// check reads summary.json's "api" (raw is the whole summary): the API
// has exactly the expected methods, each called with valid and with
// invalid params and reached. It logs each method's figures.
func (a *fuzzAPI) check(t *testing.T, raw []byte) {
	t.Helper()
	var s struct {
		API *apiCoverage `json:"api"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if s.API == nil {
		t.Fatalf("summary.json has no \"api\": the run was not API-aware (want %s)", strings.Join(a.methods, ", "))
	}
	var names []string
	for _, m := range s.API.Methods {
		names = append(names, m.Name)
		codes := make([]string, 0, len(m.ErrorsByCode))
		for c, n := range m.ErrorsByCode {
			codes = append(codes, fmt.Sprintf("%s×%d", c, n))
		}
		sort.Strings(codes)
		t.Logf("api %-40s %5d valid %5d invalid %5d unjudged calls; %5d results; errors [%s]; %d unanswered; findings %v",
			m.Name, m.CallsValid, m.CallsInvalid, m.CallsUnjudged, m.Results, strings.Join(codes, " "), m.NoReply, m.Findings)
		// Over HTTP a call that timed out is not counted: a method whose
		// valid calls outlast --timeout (server-everything's
		// trigger-long-running-operation) shows a hang instead.
		hung := slices.ContainsFunc(m.Findings, func(id string) bool { return strings.HasPrefix(id, "hang-") })
		valid, calls := m.CallsValid, m.CallsValid+m.CallsInvalid+m.CallsUnjudged
		switch {
		case calls == 0 && !hung:
			t.Errorf("%s: no call", m.Name)
		case (valid == 0 && !hung || m.CallsInvalid == 0) && calls >= apiMinCalls:
			t.Errorf("%s: %d calls with valid params, %d with invalid ones: want both", m.Name, valid, m.CallsInvalid)
		case valid == 0 && !hung || m.CallsInvalid == 0:
			t.Logf("%s: %d calls with valid params, %d with invalid ones (fewer than %d calls: not held against the run)", m.Name, valid, m.CallsInvalid, apiMinCalls)
		}
	}
	for _, n := range s.API.Notes {
		t.Logf("api note: %s", n)
	}
	want := slices.Sorted(slices.Values(a.methods))
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("the API has %q, want %q", names, want)
	}
	if len(s.API.NeverReached) > 0 {
		t.Errorf("never reached: %q (no call answered with a result or an error other than -32601)", s.API.NeverReached)
	}
}

// TestAPIFuzzGeth fuzzes go-ethereum's rpc.Server (startGeth) over HTTP
// with the eth profile and the OpenRPC document of its test services. As
// in TestFuzzGeth, the server runs in this test binary (slower under
// -race), hence --timeout 3s.
func TestAPIFuzzGeth(t *testing.T) {
	t.Parallel()
	_, httpURL, _ := startGeth(t)
	fuzzTarget{name: "api-geth", url: httpURL, minExecs: 75, duration: apiFuzzDuration,
		args: []string{"--profile", "eth", "--timeout", "3s", "--openrpc", filepath.Join("testdata", "geth-openrpc.json")},
		api:  &fuzzAPI{envelope: "geth-http", methods: []string{"test_echo", "test_add", "eth_blockNumber", "rpc_modules"}},
	}.run(t)
}

// TestAPIFuzzMCPGo fuzzes mcp-go (servers/mcpgo) over stdio with the mcp
// profile: rpcfuzz probes the era (2026-07-28) and reads tools/list.
func TestAPIFuzzMCPGo(t *testing.T) {
	t.Parallel()
	if buildErr != nil {
		t.Fatalf("cannot run rpcload: %v", buildErr)
	}
	mcpgo := filepath.Join(gomcpServers(t), "mcpgo")
	fuzzTarget{name: "api-mcpgo", child: []string{mcpgo}, minExecs: 40, duration: apiFuzzDuration,
		args: []string{"--profile", "mcp"},
		api:  &fuzzAPI{envelope: "mcpgo-stdio", methods: []string{"tool echo", "tool add"}},
	}.run(t)
}

// TestAPIFuzzGoSDK fuzzes the go-sdk (servers/gosdk -stateless) over
// Streamable HTTP with MCP-Protocol-Version 2025-11-25, as TestFuzzGoMCP
// does: not over stdio, where every malformed line ends the session and
// the child restarts (a few inputs a second).
func TestAPIFuzzGoSDK(t *testing.T) {
	t.Parallel()
	if buildErr != nil {
		t.Fatalf("cannot run rpcload: %v", buildErr)
	}
	url := gomcpStartHTTP(t, filepath.Join(gomcpServers(t), "gosdk"), "-stateless")
	fuzzTarget{name: "api-gosdk", url: url, minExecs: 75, duration: apiFuzzDuration,
		args: []string{"--profile", "mcp", "-H", "MCP-Protocol-Version: " + gomcpLegacy},
		api:  &fuzzAPI{envelope: "gosdk-http", methods: []string{"tool echo", "tool add"}},
	}.run(t)
}

// TestAPIFuzzEverything fuzzes server-everything over Streamable HTTP in a
// legacy session opened by hand, as TestFuzzEverything does (--timeout 3s
// for the same reason).
func TestAPIFuzzEverything(t *testing.T) {
	t.Parallel()
	e := findEverything(t)
	url := e.startHTTP(t)
	fuzzTarget{name: "api-everything", url: url, minExecs: 25, duration: apiFuzzDuration,
		args: append([]string{"--profile", "mcp", "--timeout", "3s"}, gomcpLegacySession(t, url)...),
		api:  &fuzzAPI{envelope: "everything-http", methods: everythingAPI},
	}.run(t)
}

// everythingAPI is what server-everything lists (tools/list, prompts/list,
// resources/list) in a session whose client declares no capabilities (the
// tools that need sampling, elicitation or roots are left out).
var everythingAPI = []string{"tool echo", "tool get-annotated-message", "tool get-env", "tool get-resource-links",
	"tool get-resource-reference", "tool get-structured-content", "tool get-sum", "tool get-tiny-image",
	"tool gzip-file-as-resource", "tool simulate-research-query", "tool toggle-simulated-logging",
	"tool toggle-subscriber-updates", "tool trigger-long-running-operation",
	"prompt simple-prompt", "prompt args-prompt", "prompt completable-prompt", "prompt resource-prompt", "resources/read"}
