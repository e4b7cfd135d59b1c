package scenario

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const full = `# every key
version: 1
target: http://127.0.0.1:8545/rpc
transport: {conns: 8, framing: content-length, http2: true, insecure: true, max_frame: 512KiB, restart: true, grace: 1500ms, stderr: logs/server.log}
profile: {name: eth}
headers:
  Authorization: "Bearer ${TOKEN}"
  X-Literal: "cost $5, $${HOME}"
seed: 18446744073709551615
feeders:
  addrs: {file: rows.csv, mode: random}
  docs: {file: data/docs.txt, format: jsonl, mode: once}
load:
  stages: [{duration: 30s, rate: 100}, {duration: 1m30s, rate: 1000.5}, {duration: 10s, rate: 0}]
  start_rate: 10
  arrival: poisson
  timeout: 2s
  drain: 0s
  max_inflight: 5000
mix:
  - method: eth_getBalance
    name: balance
    weight: 5
    params: [{$feed: addrs.address}, latest]
    timeout: 500ms
    expect: {result: {type: string, pattern: "^0x"}}
  - method: eth_blockNumber
    weight: 0.5
    batch: 10
    expect: {error_code: -32601}
  - method: echo
    params: {a: 1, b: [true, null, "x"], $$lit: {$$int: 2}}
    expect: {result_equals_params: true}
  - method: ping
    notify: true
  - method: probe
    id_reuse: true
    params: {doc: {$feed: docs}}
  - method: const
    expect: {result_equals: {b: [1, 2.5], a: "x"}}
`

func TestParseFull(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rows.csv", "address,n\n0xab,1\n")
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "data/docs.txt", `{"uri":"a"}`+"\n")
	env := map[string]string{"TOKEN": "s3cr3t"}
	s, err := Parse("full.yaml", []byte(full), dir, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if s.File != "full.yaml" || s.Version != 1 || s.Target != "http://127.0.0.1:8545/rpc" || s.Command != nil {
		t.Errorf("header fields: %+v", s)
	}
	wantT := Transport{Conns: 8, Framing: "content-length", HTTP2: true, Insecure: true, Restart: true, MaxFrame: 512 << 10, Grace: 1500 * time.Millisecond, Stderr: filepath.Join(dir, "logs/server.log")}
	if s.Transport != wantT {
		t.Errorf("transport %+v, want %+v", s.Transport, wantT)
	}
	if s.Profile != (Profile{Name: "eth"}) {
		t.Errorf("profile %+v", s.Profile)
	}
	if want := map[string]string{"Authorization": "Bearer s3cr3t", "X-Literal": "cost $5, ${HOME}"}; !reflect.DeepEqual(s.Headers, want) {
		t.Errorf("headers %q, want %q", s.Headers, want)
	}
	if s.Seed == nil || *s.Seed != 1<<64-1 {
		t.Errorf("seed %v", s.Seed)
	}
	if len(s.Feeders) != 2 || s.Feeders["addrs"] == nil || s.Feeders["docs"] == nil {
		t.Errorf("feeders %v", s.Feeders)
	}
	drain := time.Duration(0)
	wantL := LoadShape{Timeout: 2 * time.Second, Drain: &drain, MaxInFlight: 5000, StartRate: 10, Arrival: "poisson", StageKind: "rate",
		Stages: []Stage{{Duration: 30 * time.Second, Rate: 100}, {Duration: 90 * time.Second, Rate: 1000.5}, {Duration: 10 * time.Second}}}
	if !reflect.DeepEqual(s.Load, wantL) {
		t.Errorf("load %+v, want %+v", s.Load, wantL)
	}
	if len(s.Mix) != 6 {
		t.Fatalf("%d calls", len(s.Mix))
	}
	c := s.Mix[0]
	if c.Name != "balance" || c.Method != "eth_getBalance" || c.Weight != 5 || c.Timeout != 500*time.Millisecond || c.Params == nil || c.Expect.Result == nil {
		t.Errorf("call 0: %+v", c)
	}
	if string(c.Expect.ResultSchemaJSON) != `{"pattern":"^0x","type":"string"}` {
		t.Errorf("schema JSON %s", c.Expect.ResultSchemaJSON)
	}
	if err := c.Expect.Result.Validate("0x1"); err != nil {
		t.Errorf("schema rejects 0x1: %v", err)
	}
	if err := c.Expect.Result.Validate(json.Number("1")); err == nil {
		t.Errorf("schema accepts 1")
	}
	c = s.Mix[1]
	if c.Name != "eth_blockNumber" || c.Weight != 0.5 || c.Batch != 10 || c.Params != nil || c.Expect.ErrorCode == nil || *c.Expect.ErrorCode != -32601 {
		t.Errorf("call 1: %+v", c)
	}
	c = s.Mix[2]
	if !c.Expect.ResultEqualsParams || c.Weight != 1 {
		t.Errorf("call 2: %+v", c)
	}
	if b, ok := c.Params.Static(); !ok || string(b) != `{"$lit":{"$int":2},"a":1,"b":[true,null,"x"]}` {
		t.Errorf("call 2 params %s %v", b, ok)
	}
	if c = s.Mix[3]; !c.Notify || !expectsNothing(c.Expect) {
		t.Errorf("call 3: %+v", c)
	}
	if c = s.Mix[4]; !c.IDReuse {
		t.Errorf("call 4: %+v", c)
	}
	if c = s.Mix[5]; string(c.Expect.ResultEquals) != `{"a":"x","b":[1,2.5]}` {
		t.Errorf("call 5 result_equals %s", c.Expect.ResultEquals)
	}
}

// TestTemplatesRun checks that compiled params generate JSON.
func TestTemplatesRun(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rows.csv", "address\n0xab\n")
	src := "version: 1\nfeeders: {r: {file: rows.csv}}\nmix:\n  - method: a\n    params: [{$feed: r.address}, {$int: [7, 7]}, {x: {$choice: [q]}}]\n"
	s, err := Parse("s.yaml", []byte(src), dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	out, ok := s.Mix[0].Params.Append(nil, rand.New(rand.NewPCG(1, 2)), 1)
	if !ok || string(out) != `["0xab",7,{"x":"q"}]` {
		t.Errorf("Append = %s, %v", out, ok)
	}
}

func TestProfileForms(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "main.go", "package main\n")
	src := "version: 1\ncommand: [srv, --stdio]\nprofile: {name: lsp, workspace: ., open: main.go}\n" +
		"mix:\n  - method: textDocument/hover\n    params: {position: {line: 0, character: 1}}\n  - method: textDocument/documentSymbol\n    params: {textDocument: {uri: \"file:///x\"}}\n"
	s, err := Parse("s.yaml", []byte(src), dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile.Workspace != dir || s.Profile.Open != filepath.Join(dir, "main.go") || !reflect.DeepEqual(s.Command, []string{"srv", "--stdio"}) {
		t.Errorf("%+v %q", s.Profile, s.Command)
	}
	b, _ := s.Mix[0].Params.Static()
	want := `{"position":{"character":1,"line":0},"textDocument":{"uri":"file://` + filepath.ToSlash(filepath.Join(dir, "main.go")) + `"}}`
	if string(b) != want {
		t.Errorf("hover params %s, want %s", b, want)
	}
	if b, _ := s.Mix[1].Params.Static(); string(b) != `{"textDocument":{"uri":"file:///x"}}` {
		t.Errorf("explicit textDocument replaced: %s", b)
	}

	for _, tc := range []struct{ src, name, era string }{
		{"profile: mcp", "mcp", ""},
		{"profile: {name: mcp, mcp_era: 2025-06-18}", "mcp", "2025-06-18"},
		{"profile: {name: mcp, mcp_era: modern}", "mcp", "modern"},
	} {
		s, err := Parse("s.yaml", []byte("version: 1\n"+tc.src+"\nmix: [{method: a}]\n"), dir, noEnv)
		if err != nil || s.Profile.Name != tc.name || s.Profile.MCPEra != tc.era {
			t.Errorf("%s: %+v %v", tc.src, s, err)
		}
	}
}

func TestClosedLoopStages(t *testing.T) {
	src := "version: 1\ncommand: [srv, --port, 8080, true]\nload:\n  start_concurrency: 2\n  stages: [{duration: 1s, concurrency: 0}, {duration: 2s, concurrency: 8}]\nmix: [{method: a}]\n"
	s, err := Parse("s.yaml", []byte(src), t.TempDir(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := LoadShape{StageKind: "concurrency", StartConcurrency: 2, Stages: []Stage{{Duration: time.Second}, {Duration: 2 * time.Second, Concurrency: 8}}}
	if !reflect.DeepEqual(s.Load, want) {
		t.Errorf("load %+v, want %+v", s.Load, want)
	}
	if !reflect.DeepEqual(s.Command, []string{"srv", "--port", "8080", "true"}) {
		t.Errorf("command %q", s.Command)
	}
}

func TestDefaults(t *testing.T) {
	s, err := Parse("s.yaml", []byte("version: 1\nmix: [{method: a}]\n"), t.TempDir(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Target != "" || s.Command != nil || s.Seed != nil || s.Load.Drain != nil || s.Headers != nil || s.Transport != (Transport{}) || s.Load.Rate != 0 {
		t.Errorf("not zero: %+v", s)
	}
	if c := s.Mix[0]; c.Name != "a" || c.Weight != 1 || c.Params != nil || !expectsNothing(c.Expect) {
		t.Errorf("call: %+v", c)
	}
}

// TestSecretsNotEchoed checks that no problem quotes a header value.
func TestSecretsNotEchoed(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "BAD" {
			return "hunter2\r\nX-Evil: 1", true
		}
		return "", false
	}
	src := "version: 1\nheaders:\n  A: \"hunter2 ${MISSING}\"\n  B: \"${BAD}\"\n  C: \"hunter2 ${\"\n  D: \"${hunter2-x}\"\n  E: 12345678\nmix: [{method: a}]\n"
	list := parseErrs(t, src, env)
	if len(list) != 5 {
		t.Errorf("want 5 problems, got:\n%v", list)
	}
	if msg := list.Error(); strings.Contains(msg, "hunter2") || strings.Contains(msg, "12345678") {
		t.Errorf("a header value is echoed:\n%s", msg)
	}
}

func TestAliases(t *testing.T) {
	src := "version: 1\nmix:\n  - method: a\n    params: &p {x: [1, 2]}\n  - method: b\n    params: *p\n    expect: {result_equals: *p}\n"
	s, err := Parse("s.yaml", []byte(src), t.TempDir(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Mix[1].Params.Static(); string(b) != `{"x":[1,2]}` || string(s.Mix[1].Expect.ResultEquals) != `{"x":[1,2]}` {
		t.Errorf("%s %s", b, s.Mix[1].Expect.ResultEquals)
	}

	// A billion laughs stops at the node budget, reported once.
	var b strings.Builder
	b.WriteString("version: 1\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("l" + itoa(i) + ": &l" + itoa(i) + " [")
		for j := 0; j < 10; j++ {
			b.WriteString("*l" + itoa(i-1) + ", ")
		}
		b.WriteString("x]\n")
	}
	b.WriteString("mix: [{method: a, params: *l8}]\n")
	list := parseErrs(t, b.String(), noEnv)
	n := 0
	for _, e := range list {
		if strings.Contains(e.Msg, "too large") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want one 'too large' problem, got:\n%v", list)
	}
}

func TestAllProblemsAtOnceSorted(t *testing.T) {
	src := "version: 3\nload: {rate: 0}\nmix:\n  - {method: a, weight: -1}\n  - {method: a}\ntarget: nope\n"
	list := parseErrs(t, src, noEnv)
	if len(list) < 5 {
		t.Fatalf("want at least 5 problems, got:\n%v", list)
	}
	for i := 1; i < len(list); i++ {
		a, b := list[i-1], list[i]
		if a.Line > b.Line || a.Line == b.Line && a.Col > b.Col {
			t.Errorf("not sorted: %v before %v", a, b)
		}
	}
	if lines := strings.Split(list.Error(), "\n"); len(lines) != len(list) || !strings.HasPrefix(lines[0], "s.yaml:1:10: ") {
		t.Errorf("Error():\n%s", list.Error())
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "s.yaml", "version: 1\nmix: [{method: a, weight: 0}]\n")
	_, err := Load(path, noEnv)
	var list Errors
	if !errors.As(err, &list) || list[0].File != path || list[0].Line != 2 {
		t.Errorf("Load: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), noEnv); err == nil || errors.As(err, &list) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestExpand(t *testing.T) {
	env := func(k string) (string, bool) {
		return map[string]string{"A": "1", "B_2": "two"}[k], k == "A" || k == "B_2"
	}
	for in, want := range map[string]string{
		"":                "",
		"plain $A":        "plain $A",
		"${A}":            "1",
		"x${A}y${B_2}z":   "x1ytwoz",
		"$${A}":           "${A}",
		"$$${A}":          "$${A}",
		"${A}$${B_2}${A}": "1${B_2}1",
	} {
		if got, err := expand(in, env); err != nil || got != want {
			t.Errorf("expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestSecretsCollected: every value ${VAR} took from the environment is in
// Scenario.Secrets, for the commands to scrub; literal text is not.
func TestSecretsCollected(t *testing.T) {
	env := func(k string) (string, bool) {
		switch k {
		case "TOKEN":
			return "tok-from-env-1", true
		case "USER":
			return "someone", true
		case "EMPTY":
			return "", true
		}
		return "", false
	}
	src := "version: 1\nheaders:\n  Authorization: \"Bearer ${TOKEN}\"\n  X-User: \"${USER}-literal\"\n  X-Empty: \"${EMPTY}\"\n  X-Plain: plain\nmix: [{method: a}]\n"
	s, err := Parse("s.yaml", []byte(src), t.TempDir(), env)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(s.Secrets)
	slices.Sort(got)
	if want := []string{"someone", "tok-from-env-1"}; !slices.Equal(got, want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
	if s.Headers["Authorization"] != "Bearer tok-from-env-1" {
		t.Errorf("Authorization = %q", s.Headers["Authorization"])
	}
}

// TestRawAndMutate: raw frames as text or base64, and a call's mutate with
// its fraction as a number or a percentage.
func TestRawAndMutate(t *testing.T) {
	src := "version: 1\nmix:\n" +
		"  - {raw: '{\"id\":1'}\n" +
		"  - {name: bytes, raw: {base64: /wA=}}\n" +
		"  - {method: a, mutate: {fraction: 5%, ops: [params_arity]}}\n" +
		"  - {method: b, mutate: {fraction: 0.25}}\n"
	s, err := Parse("s.yaml", []byte(src), t.TempDir(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Mix
	switch {
	case string(m[0].Raw) != `{"id":1` || m[0].Name != "raw1" || m[0].Method != "":
		t.Errorf("call 1: %+v", m[0])
	case string(m[1].Raw) != "\xff\x00" || m[1].Name != "bytes":
		t.Errorf("call 2: %+v", m[1])
	case m[2].Mutate == nil || m[2].Mutate.Fraction != 0.05 || len(m[2].Mutate.Ops) != 1 || m[2].Mutate.Ops[0] != "params_arity":
		t.Errorf("call 3: %+v", m[2].Mutate)
	case m[3].Mutate == nil || m[3].Mutate.Fraction != 0.25 || m[3].Mutate.Ops != nil:
		t.Errorf("call 4: %+v", m[3].Mutate)
	}
}
