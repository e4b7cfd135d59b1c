package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestDocCommands runs every command of README.md and docs/*.md (the
// blocks readDocBlocks reads) as written, with the built rpcload and
// rpcfuzz binaries, against reference servers on loopback, and checks its
// exit code: 0 unless docExits says otherwise. What it changes, and why:
//
//   - rpcload and rpcfuzz are the binaries built from this tree; so is
//     "go run ./cmd/rpcload" (and ./cmd/rpcfuzz). The child command after
//     -- finds them on PATH.
//   - Every host (and port) in a target URL (and in a scenario file's target) is
//     a server the test starts: a server command of the block itself
//     (rpcload serve with addresses, which listens on free ports instead,
//     read from what it prints), else rpcload serve started for that
//     address (with the command's --profile mcp or lsp). A ws:// URL
//     without a path gets /ws, where the reference server speaks
//     WebSocket. Other loopback addresses (--metrics-addr) get free ports.
//   - Sending is cut short: --duration (and -d) over 300ms becomes 300ms,
//     and a run without one gets --duration 300ms (a soak's quiet phase
//     too: --soak-quiet over 300ms, or none given, becomes 300ms); the scenario files are
//     copies whose durations are 300ms. Rates over 1000/s (--rate, and a
//     scenario's rate and start_rate) become 1000/s: the test checks that
//     the commands run as written, not how much load this machine takes. rpcfuzz run stops at its first
//     failure (--stop-after 1) or after 2 s.
//   - rpcload capacity takes short steps (docCapacitySteps) and offers at
//     most --max-rate 1000/s, so its search ends at that bound.
//   - Placeholders for the user's own server or files are replaced
//     (docPlaceholders); result files a command reads that the block did
//     not write are a short run's result, and --shard i/n runs all n parts,
//     as the text around it says (unless the block runs the other parts
//     itself).
//   - A command ending in & (but rpcload serve, a server of the block) runs
//     in the background, as a shard serving its result for a merge does;
//     it is waited for, and its exit code checked, when the block ends.
//   - go install is checked, not run (the package paths exist in this
//     module); commands needing what this machine may not have are
//     skipped, each with its reason (docSkips).
//
// Server commands run until the block ends: the test waits for them to
// say they serve, then interrupts them and wants exit 0.
func TestDocCommands(t *testing.T) {
	bin := binary(t)
	fuzzBin := rpcfuzzBinary(t)
	fixture := docFixture(t)
	var blocks []docBlock
	for _, f := range docFiles(t) {
		b, err := readDocBlocks(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b...)
	}
	if len(blocks) < 10 {
		t.Fatalf("only %d command blocks found in README.md and docs/", len(blocks))
	}
	binDir := filepath.Dir(bin)
	for _, b := range blocks {
		t.Run(b.where, func(t *testing.T) {
			t.Parallel()
			e := &docEnv{t: t, dir: t.TempDir(), binDir: binDir, bins: map[string]string{"rpcload": bin, "rpcfuzz": fuzzBin},
				fixture: fixture, hosts: map[string]*docHost{}, shardCounts: map[string]int{}}
			defer e.stopServers()
			defer e.waitBackground()
			for _, c := range b.cmds {
				if i := slices.Index(c.argv, "--shard"); i > 0 && i+1 < len(c.argv) {
					_, n, _ := strings.Cut(c.argv[i+1], "/")
					e.shardCounts[n]++
				}
			}
			e.ensureInput(docCmd{where: b.where}, "README.md") // what the LSP examples open
			for _, c := range b.cmds {
				e.run(c)
				if t.Failed() {
					return // the later commands build on this one
				}
			}
		})
	}
}

// docSkips are the commands not run, by words they contain in a row,
// with the reason. Only commands that need what the test cannot provide
// are here.
var docSkips = []struct {
	words  []string
	reason string
}{
	{[]string{"npx"}, "needs Node.js and the npm package @modelcontextprotocol/server-everything (interop/ runs it)"},
	{[]string{"--", "gopls"}, "needs the Go language server gopls (interop/ runs it)"},
	{[]string{"go", "run", "./bench"}, "the benchmark suite: minutes of load, with wrk, vegeta and hey (docs/benchmarks.md)"},
	{[]string{"go", "test"}, "go test: the test suite itself, or the user's own package (./myserver)"},
	{[]string{"go", "mod"}, "changes the user's own go.mod (cmd/rpcfuzz's TestMinimizeNative runs it in a module of its own)"},
	{[]string{"kubectl"}, "needs a Kubernetes cluster (kubecheck/ decodes rpcload kubernetes' manifests into the Kubernetes API's types)"},
	{[]string{"rpcfuzz", "minimize", "myserver/testdata/fuzz/FuzzRPC/5d1e0a12b3c4d5e6"}, "a native failure of the user's package (cmd/rpcfuzz's TestMinimizeNative runs it in a package of its own)"},
}

// docPlaceholders stand for the user's own server: each becomes the
// reference server of the same kind.
var docPlaceholders = map[string][]string{
	"./my-mcp-server":              {"rpcload", "serve", "--profile", "mcp", "--stdio"},
	"./my-server --stdio":          {"rpcload", "serve", "--stdio"},
	"./my-language-server":         {"rpcload", "serve", "--profile", "lsp", "--stdio"},
	"./my-language-server --stdio": {"rpcload", "serve", "--stdio", "--framing", "content-length"},
	"node server.js":               {"rpcload", "serve", "--stdio"},
}

// docExits are the commands that must exit other than 0, by a piece of
// their text, and why.
var docExits = []struct {
	text   string
	codes  []int
	reason string
}{
	{"--fault duplicate=0.01", []int{exitFindings}, "the server answers 1% twice: duplicate_reply"},
	{"--threshold 'capacity>=1800'", []int{exitFindings}, "the test's capacity searches stop at --max-rate 1000 (docCapacitySteps), below the gate"},
	{"--rate 2000 --duration 5s --method get_time", []int{exitFindings}, "the block's server answers 1% twice (--fault duplicate=0.01): duplicate_reply"},
	{"--diff", []int{exitOK, exitFindings}, "eth_blockNumber of two reference servers follows each one's own clock, so replies may differ (exit 1)"},
	{"rpcfuzz run tcp://127.0.0.1:9090", []int{exitFindings}, "planted bugs: a failure found"},
	{"rpcfuzz replay", []int{exitFindings}, "the finding is reproduced"},
	{"--planted-bugs empty_string --stdio", []int{exitFindings}, "the planted tool crash (search with an empty query) is found"},
	{"rpcfuzz run --profile mcp --out findings -- ./my-mcp-server", []int{exitOK, exitFindings}, docSleepTool},
	{"rpcfuzz run --out findings --profile mcp -- ./my-mcp-server", []int{exitOK, exitFindings}, docSleepTool},
	{"rpcfuzz run tcp://127.0.0.1:9091 --discover", []int{exitFindings}, "the planted handler crash (countdown with a negative n) is found"},
	// A gate's verdict on latency depends on the machine; what the test
	// checks is that the command runs (no usage error, target reached).
	{"--threshold", []int{exitOK, exitFindings}, "a --threshold verdict on latency depends on the machine's speed"},
	// The examples written for an Ethereum node call eth_call, which the
	// reference server does not have: every such call is -32601, so the
	// error-rate and violations gates fail, as they should.
	{"error_rate<0.1%", []int{exitFindings}, "eth_call is -32601 on the reference server: error_rate fails"},
}

// docSleepTool is why an API-aware run against the reference MCP server
// may fail: its sleep tool answers after up to 10 minutes, as its schema
// allows, so a valid call may be a hang at rpcfuzz's --timeout 1s.
const docSleepTool = "the reference MCP server's sleep tool takes up to 10 minutes, as its schema allows: a valid call may be a hang at --timeout 1s"

// docHost is a server address of the docs, and where it really is.
type docHost struct{ http, tcp, tcpLSP string }

// docEnv runs the commands of one block in a directory of its own.
type docEnv struct {
	t       *testing.T
	dir     string
	binDir  string
	bins    map[string]string
	fixture string              // a result file, for commands that read one the block did not write
	hosts   map[string]*docHost // by host:port as written
	ports   map[string]string   // other loopback addresses, as written → free ones
	servers []*docServer
	// shardCounts counts the block's commands of --shard i/n, by n: a block
	// that gives more than one runs the parts itself.
	shardCounts map[string]int
	background  []func() // waits for a command run with & and checks it
}

type docServer struct {
	where string
	cmd   *exec.Cmd
	lines *clitest.Lines
}

const docDuration = 300 * time.Millisecond

// docMaxRate is the highest rate a command of the docs is run at.
const docMaxRate = 1000

var docScenarioRate = regexp.MustCompile(`(?m)(\brate|start_rate):\s*([0-9.]+)`)

// docFuzzDuration bounds an rpcfuzz run; one against planted bugs stops
// at its first failure long before (--stop-after 1).
const docFuzzDuration = "2s"

// docCapacitySteps are the lengths of a capacity search's steps in the
// commands the test runs, and the most it offers.
var docCapacitySteps = map[string]string{
	"--step-duration": "300ms", "--warmup": "100ms", "--confirm-duration": "300ms", "--max-rate": strconv.Itoa(docMaxRate),
}

var docURL = regexp.MustCompile(`\b(https?|wss?|tcp\+lsp|tcp)://([A-Za-z0-9.\-]+(?::[0-9]+)?)(/[^\s'"]*)?`)

// docScenarioTarget is a scenario file's target line.
var docScenarioTarget = regexp.MustCompile(`(?m)^target:\s*(\S+)`)

// run runs one command as the package comment says.
func (e *docEnv) run(c docCmd) {
	t := e.t
	if c.err != nil {
		t.Errorf("%s: %v: %s", c.where, c.err, c.text)
		return
	}
	argv := slices.Clone(c.argv)
	if len(argv) >= 3 && argv[0] == "go" && argv[1] == "run" && (argv[2] == "./cmd/rpcload" || argv[2] == "./cmd/rpcfuzz") {
		argv = append([]string{filepath.Base(argv[2])}, argv[3:]...)
	}
	for _, s := range docSkips {
		if containsRun(argv, s.words) {
			t.Logf("%s: skipped (%s): %s", c.where, s.reason, c.text)
			return
		}
	}
	if argv[0] == "go" {
		e.checkGoInstall(c, argv)
		return
	}
	if _, ok := e.bins[argv[0]]; !ok {
		t.Errorf("%s: %s is neither rpcload nor rpcfuzz, nor skipped with a reason: %s", c.where, argv[0], c.text)
		return
	}
	argv = e.rewrite(c, argv)
	if argv[0] == "rpcload" && len(argv) > 1 && argv[1] == "serve" && !slices.Contains(argv, "--stdio") {
		e.startServer(c, argv)
		return
	}
	want, reason := []int{exitOK}, ""
	for _, x := range docExits {
		if strings.Contains(c.text, x.text) {
			want, reason = x.codes, x.reason
		}
	}
	runs := [][]string{argv}
	if i := slices.Index(argv, "--shard"); i > 0 && i+1 < len(argv) {
		if _, n, _ := strings.Cut(argv[i+1], "/"); e.shardCounts[n] < 2 {
			runs = docShards(argv, i)
		}
	}
	var wg sync.WaitGroup
	results := make([]child, len(runs))
	for i, a := range runs {
		wg.Go(func() { results[i] = e.exec(a) })
	}
	check := func() {
		wg.Wait()
		for i, r := range results {
			if !slices.Contains(want, r.code) {
				t.Errorf("%s: %s\nran: %q\nexit %d, want one of %v %s\n%s", c.where, c.text, runs[i], r.code, want, reason, r)
			}
		}
	}
	if c.bg {
		e.background = append(e.background, check)
		return
	}
	check()
}

// waitBackground waits for the commands the block ran with & and checks
// their exit codes.
func (e *docEnv) waitBackground() {
	for _, check := range e.background {
		check()
	}
}

// containsRun reports whether words occur in argv, in a row.
func containsRun(argv, words []string) bool {
	for i := 0; i+len(words) <= len(argv); i++ {
		if slices.Equal(argv[i:i+len(words)], words) {
			return true
		}
	}
	return false
}

// exec runs argv in the block's directory, with the binaries first on PATH.
func (e *docEnv) exec(argv []string) child {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bins[argv[0]], argv[1:]...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "PATH="+e.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.WaitDelay = time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := child{stdout: tail(stdout.String()), stderr: tail(stderr.String()), elapsed: time.Since(start)}
	switch {
	case ctx.Err() != nil:
		r.code = -1
	case cmd.ProcessState != nil:
		r.code = cmd.ProcessState.ExitCode()
	default:
		r.code, r.stderr = -1, err.Error()
	}
	return r
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

// rewrite makes argv runnable here: placeholders, addresses, durations,
// files.
func (e *docEnv) rewrite(c docCmd, argv []string) []string {
	main, rest := argv, []string(nil)
	if dash := slices.Index(argv, "--"); dash > 0 {
		main, rest = slices.Clone(argv[:dash]), argv[dash:]
		if p, ok := docPlaceholders[strings.Join(rest[1:], " ")]; ok {
			rest = append([]string{"--"}, p...)
		}
	}
	profile := ""
	if i := slices.Index(main, "--profile"); i > 0 && i+1 < len(main) {
		profile = main[i+1]
	}
	sub := ""
	if len(main) > 1 {
		sub = main[1]
	}
	hasDuration := false
	for i := 1; i < len(main); i++ {
		a, prev := main[i], main[i-1]
		switch {
		case sub == "serve":
		case prev == "--duration" || prev == "-d":
			hasDuration = true
			if d, err := time.ParseDuration(a); err == nil && d > docDuration {
				main[i] = docDuration.String()
			}
			if main[0] == "rpcfuzz" {
				main[i] = docFuzzDuration
			}
		case prev == "--soak-quiet":
			if d, err := time.ParseDuration(a); err == nil && d > docDuration {
				main[i] = docDuration.String()
			}
		case sub == "capacity" && slices.Contains([]string{"--step-duration", "--warmup", "--confirm-duration"}, prev):
			main[i] = docCapacitySteps[prev]
		case prev == "--rate" || prev == "-r" || prev == "--max-rate" || prev == "--start-rate":
			if r, err := cli.ParseRate(a); err == nil && r > docMaxRate {
				main[i] = strconv.Itoa(docMaxRate)
			}
		case prev == "-f" || prev == "--file":
			main[i] = e.scenario(c, a, profile)
		case strings.HasPrefix(a, "findings/crash-"):
			main[i] = e.finding(c)
		case strings.HasSuffix(a, ".json") && !strings.HasPrefix(prev, "-") && (slices.Contains([]string{"compare", "report", "check", "merge"}, sub) || prev == "from-openrpc"):
			e.ensureInput(c, a)
		case prev == "--openrpc":
			// (rpcfuzz's API document: the reference server's own.)
			e.ensureFile(c, a, filepath.Join("..", "..", "internal", "testsrv", "openrpc.json"))
		default:
			main[i] = e.addrs(c, a, profile)
		}
	}
	if sub == "capacity" {
		for _, flag := range []string{"--step-duration", "--warmup", "--confirm-duration", "--max-rate"} {
			if !slices.Contains(main, flag) {
				main = append(main, flag, docCapacitySteps[flag])
			}
		}
	}
	if slices.Contains(main, "--soak") && !slices.Contains(main, "--soak-quiet") {
		main = append(main, "--soak-quiet", docDuration.String())
	}
	if main[0] == "rpcfuzz" && sub == "run" && !slices.Contains(main, "--stop-after") {
		main = append(main, "--stop-after", "1")
	}
	if !hasDuration && (sub == "" || sub == "run" || strings.HasPrefix(sub, "-")) {
		d := docDuration.String()
		if main[0] == "rpcfuzz" {
			d = docFuzzDuration
		}
		main = append(main, "--duration", d)
	}
	return append(main, rest...)
}

// addrs rewrites the server addresses in one argument.
func (e *docEnv) addrs(c docCmd, a, profile string) string {
	a = docURL.ReplaceAllStringFunc(a, func(u string) string {
		m := docURL.FindStringSubmatch(u)
		scheme, hostport, path := m[1], m[2], m[3]
		h := e.host(c, hostport, profile)
		switch scheme {
		case "tcp":
			return "tcp://" + h.tcp
		case "tcp+lsp":
			return "tcp+lsp://" + h.tcpLSP
		case "ws", "wss":
			if path == "" || path == "/" {
				path = "/ws"
			}
			return "ws://" + h.http + path
		}
		return "http://" + h.http + path
	})
	if strings.HasPrefix(a, "127.0.0.1:") {
		if e.ports == nil {
			e.ports = map[string]string{}
		}
		if _, ok := e.ports[a]; !ok {
			e.ports[a] = clitest.FreeAddr(e.t)
		}
		a = e.ports[a]
	}
	return a
}

// host is where the server the docs call hostport really is: started by
// the block, or now.
func (e *docEnv) host(c docCmd, hostport, profile string) *docHost {
	if h, ok := e.hosts[hostport]; ok {
		return h
	}
	argv := []string{"rpcload", "serve", "--http", hostport, "--tcp", hostport, "--tcp-lsp", hostport}
	if profile == "mcp" || profile == "lsp" {
		argv = append(argv, "--profile", profile)
	}
	e.startServer(docCmd{where: c.where + " (a server for " + hostport + ")"}, argv)
	return e.hosts[hostport]
}

// startServer starts an rpcload serve command on free ports and records
// where its addresses really are.
func (e *docEnv) startServer(c docCmd, argv []string) {
	t := e.t
	argv = slices.Clone(argv)
	flagOf := map[string]string{}
	for i := 1; i+1 < len(argv); i++ {
		switch argv[i] {
		case "--http", "--tcp", "--tcp-lsp":
			flagOf[argv[i]] = argv[i+1]
			argv[i+1] = "127.0.0.1:0"
		case "--unix", "--unix-lsp":
			argv[i+1] = filepath.Join(e.dir, filepath.Base(argv[i+1]))
		}
	}
	cmd := exec.Command(e.bins["rpcload"], argv[1:]...)
	cmd.Dir = e.dir
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &docServer{where: c.where, cmd: cmd, lines: clitest.Read(out)}
	e.servers = append(e.servers, s)
	for _, flag := range []string{"--http", "--tcp", "--tcp-lsp"} {
		orig, ok := flagOf[flag]
		if !ok {
			continue
		}
		prefix := map[string]string{"--http": " http://", "--tcp": " tcp://", "--tcp-lsp": " tcp+lsp://"}[flag]
		line := s.lines.Wait(t, 20*time.Second, c.where+": the line saying where "+flag+" serves", func(l string) bool {
			return strings.HasPrefix(l, "serving") && strings.Contains(l, prefix) && !strings.Contains(l, "Streamable")
		})
		addr := line[strings.LastIndex(line, prefix)+len(prefix):]
		addr = strings.TrimSuffix(addr, "/")
		h := e.hosts[orig]
		if h == nil {
			h = &docHost{}
			e.hosts[orig] = h
		}
		switch flag {
		case "--http":
			h.http = addr
		case "--tcp":
			h.tcp = addr
		default:
			h.tcpLSP = addr
		}
	}
}

// stopServers interrupts the block's servers; each must exit 0.
func (e *docEnv) stopServers() {
	for _, s := range e.servers {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				e.t.Errorf("%s: the server exited with %v after an interrupt:\n%s", s.where, err, s.lines)
			}
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
			e.t.Errorf("%s: the server did not stop within 20s of an interrupt", s.where)
		}
	}
}

// scenario copies a scenario file into the block's directory with its
// durations cut to docDuration and its target moved to the test's server,
// and returns the copy's path.
func (e *docEnv) scenario(c docCmd, name, profile string) string {
	src := filepath.Join("..", "..", name)
	if _, err := os.Stat(src); err != nil {
		// A placeholder for the user's own file: the Ethereum example, with
		// the data files it reads next to it.
		src = filepath.Join("..", "..", "scenarios", "ethereum.yaml")
		if err := os.CopyFS(filepath.Join(e.dir, filepath.Dir(name), "data"), os.DirFS(filepath.Join("..", "..", "scenarios", "data"))); err != nil && !os.IsExist(err) {
			e.t.Fatal(err)
		}
	}
	data, err := os.ReadFile(src)
	if err != nil {
		e.t.Fatal(err)
	}
	text := regexp.MustCompile(`duration:\s*[0-9a-z.]+`).ReplaceAllString(string(data), "duration: "+docDuration.String())
	text = docScenarioRate.ReplaceAllStringFunc(text, func(m string) string {
		g := docScenarioRate.FindStringSubmatch(m)
		if r, err := strconv.ParseFloat(g[2], 64); err == nil && r > docMaxRate {
			return g[1] + ": " + strconv.Itoa(docMaxRate)
		}
		return m
	})
	text = docScenarioTarget.ReplaceAllStringFunc(text, func(line string) string { return e.addrs(c, line, profile) })
	dst := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(e.dir, "scenarios"), os.DirFS(filepath.Join("..", "..", "scenarios"))); err != nil && !os.IsExist(err) {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return name
}

// finding is the first finding the block's fuzz run wrote, for the
// placeholder findings/crash-….
func (e *docEnv) finding(c docCmd) string {
	dirs, _ := filepath.Glob(filepath.Join(e.dir, "findings", "*", "finding.json"))
	if len(dirs) == 0 {
		e.t.Fatalf("%s: no finding in findings/ to stand for %s", c.where, c.text)
	}
	rel, _ := filepath.Rel(e.dir, filepath.Dir(dirs[0]))
	return rel
}

// ensureInput gives a command the input file it reads when the block did
// not write it: a result file, or an OpenRPC document.
func (e *docEnv) ensureInput(c docCmd, name string) {
	src := e.fixture
	switch name {
	case "openrpc.json":
		src = filepath.Join("..", "..", "internal", "discover", "testdata", "openrpc.json")
	case "README.md":
		src = filepath.Join("..", "..", "README.md")
	}
	e.ensureFile(c, name, src)
}

// ensureFile copies src to name in the block's directory, unless the block
// wrote one already.
func (e *docEnv) ensureFile(c docCmd, name, src string) {
	dst := filepath.Join(e.dir, name)
	if _, err := os.Stat(dst); err == nil {
		return
	}
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dst, data, 0o644)
	}
	if err != nil {
		e.t.Fatalf("%s: %v", c.where, err)
	}
}

// checkGoInstall checks a go install line without running it: every
// package it names is a main package of this module.
func (e *docEnv) checkGoInstall(c docCmd, argv []string) {
	if len(argv) < 3 || argv[1] != "install" {
		e.t.Errorf("%s: a go command that is neither go install nor skipped: %s", c.where, c.text)
		return
	}
	for _, p := range argv[2:] {
		p, _, _ = strings.Cut(p, "@")
		dir := strings.TrimPrefix(p, "github.com/rpcload/rpcload/")
		if rest, ok := strings.CutSuffix(dir, "/..."); ok {
			dir = rest
		}
		if !strings.HasPrefix(dir, "./") && dir == p {
			e.t.Errorf("%s: %s is not a package of this module", c.where, p)
			continue
		}
		mains, _ := filepath.Glob(filepath.Join("..", "..", dir, "*", "main.go"))
		if m, _ := filepath.Glob(filepath.Join("..", "..", dir, "main.go")); len(m) > 0 {
			mains = append(mains, m...)
		}
		if len(mains) == 0 {
			e.t.Errorf("%s: %s holds no main package", c.where, p)
		}
	}
	e.t.Logf("%s: checked, not run: %s", c.where, c.text)
}

// docShards is the one command of --shard i/n as all n parts, each
// writing its own -o file (its name with i replaced by the part's).
func docShards(argv []string, at int) [][]string {
	i, n, ok := strings.Cut(argv[at+1], "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil {
		return [][]string{argv}
	}
	var runs [][]string
	for k := 1; k <= count; k++ {
		a := slices.Clone(argv)
		a[at+1] = fmt.Sprintf("%d/%d", k, count)
		if o := slices.Index(a, "-o"); o > 0 && o+1 < len(a) {
			a[o+1] = strings.Replace(a[o+1], i, strconv.Itoa(k), 1)
		}
		runs = append(runs, a)
	}
	return runs
}

var (
	fuzzBinOnce sync.Once
	fuzzBinPath string
	fuzzBinErr  error
	fixtureOnce sync.Once
	fixturePath string
	fixtureErr  string
)

// rpcfuzzBinary builds the rpcfuzz command next to rpcload's binary.
func rpcfuzzBinary(t *testing.T) string {
	t.Helper()
	fuzzBinOnce.Do(func() {
		gobin, err := goTool()
		if err != nil {
			fuzzBinErr = err
			return
		}
		fuzzBinPath = filepath.Join(binDir, "rpcfuzz")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, gobin, "build", "-o", fuzzBinPath, "../rpcfuzz").CombinedOutput(); err != nil {
			fuzzBinErr = fmt.Errorf("go build ../rpcfuzz: %v\n%s", err, out)
		}
	})
	if fuzzBinErr != nil {
		t.Fatal(fuzzBinErr)
	}
	return fuzzBinPath
}

// docFixture is the result file of a short run against the reference
// server, for commands that read results the block did not write.
func docFixture(t *testing.T) string {
	t.Helper()
	fixtureOnce.Do(func() {
		_, _, tcpURL := startServer(t, testsrv.Config{})
		fixturePath = filepath.Join(binDir, "fixture-result.json")
		c := runChild(binary(t), 30*time.Second, []string{"run", tcpURL, "--method", "echo", "--params", "[1]", "--rate", "200", "--duration", "300ms", "-q", "-o", fixturePath})
		if c.code != exitOK {
			fixtureErr = c.String()
		}
	})
	if fixtureErr != "" {
		t.Fatalf("the fixture run failed: %s", fixtureErr)
	}
	return fixturePath
}
