package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/golden"
	"github.com/rpcload/rpcload/internal/kube"
)

// kubernetesExample is the call deploy/kubernetes/rpcload.yaml is the
// output of (deploy/kubernetes/README.md shows it), made at exampleNow.
var kubernetesExample = []string{"kubernetes", "--shards", "3", "--image", "registry.example.com/rpcload:latest", "--",
	"run", "http://jsonrpc-server.default.svc.cluster.local:8545/", "--method", "eth_blockNumber", "--rate", "3000", "--duration", "60s"}

// exampleNow is when the tests' manifests are made: their shards start
// --start-in (2m) later, at 2030-01-01T00:00:00Z.
var exampleNow = time.Date(2029, 12, 31, 23, 58, 0, 0, time.UTC)

// kubernetesCall is realMain for rpcload kubernetes at exampleNow.
func kubernetesCall(args []string, stdout, stderr io.Writer) int {
	code, err := kubernetesAt(args[1:], exampleNow, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rpcload: %v\n", err)
	}
	return cli.ExitCode(code, err)
}

// TestKubernetesExample keeps deploy/kubernetes/rpcload.yaml the output of
// the example call; go test -update rewrites it.
func TestKubernetesExample(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := kubernetesCall(kubernetesExample, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, &stderr)
	}
	mustContain(t, "stderr", stderr.String(), "3 shards start at 2030-01-01T00:00:00Z, in 2m0s: apply the manifests now")
	golden.CheckFile(t, filepath.Join("..", "..", "deploy", "kubernetes", "rpcload.yaml"), stdout.Bytes())
	readme, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	call := "rpcload " + strings.Join(kubernetesExample, " ")
	if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(string(readme), "\\\n", " ")), " "), call) {
		t.Errorf("deploy/kubernetes/README.md does not show the call rpcload.yaml comes from:\n%s", call)
	}
}

// TestKubernetesManifests renders several calls and reads them back: every
// document parses, N is everywhere it must be, the shards get their
// command line and the merge one URL per shard, and -o writes what stdout
// would have.
func TestKubernetesManifests(t *testing.T) {
	run := []string{"--", "run", "http://rpc.default.svc:8545/", "--method", "eth_blockNumber", "--rate", "900", "-d", "30s"}
	tests := []struct {
		name  string
		flags []string
		kinds []string
		merge []string // in the merge's args
	}{
		{"one shard", []string{"--shards", "1"}, []string{"Service", "Job", "Job"}, []string{"http://rpcload-0.rpcload:8080"}},
		{"ten", []string{"--shards", "10", "--name", "eth", "--namespace", "load"}, []string{"Service", "Job", "Job"}, []string{"http://eth-9.eth:8080"}},
		{"everything", []string{"--shards", "3", "--pod-monitor", "--volume-claim", "results", "--allow-missing", "--upload", "https://store.example.com/r.json",
			"--keep", "0", "--result-port", "7000", "--metrics-port", "7001", "--env-from-secret", "tokens"},
			[]string{"Service", "PodMonitor", "Job", "Job"}, []string{"--allow-missing", "--upload", "http://rpcload-2.rpcload:7000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"kubernetes", "--image", "r.example.com/rpcload:1"}, tt.flags...), run...)
			var stdout, stderr bytes.Buffer
			if code := kubernetesCall(args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, &stderr)
			}
			var kinds []string
			var shardArgs, mergeArgs []string
			dec := yaml.NewDecoder(bytes.NewReader(stdout.Bytes()))
			for {
				var o struct {
					Kind string
					Spec struct {
						Completions int
						Template    struct {
							Spec struct {
								Containers []struct {
									Name string
									Args []string
								}
							}
						}
					}
				}
				if err := dec.Decode(&o); err != nil {
					break
				}
				kinds = append(kinds, o.Kind)
				for _, c := range o.Spec.Template.Spec.Containers {
					switch c.Name {
					case "rpcload":
						shardArgs = c.Args
					case "merge":
						mergeArgs = c.Args
					}
				}
			}
			if !slices.Equal(kinds, tt.kinds) {
				t.Errorf("documents %v, want %v", kinds, tt.kinds)
			}
			if !slices.Equal(shardArgs[:len(run)-1], run[1:]) {
				t.Errorf("the shards run %q, want it to start with %q", shardArgs, run[1:])
			}
			n := tt.flags[1]
			mustContain(t, "the shards' args", strings.Join(shardArgs, " "), "--shard-count "+n+" --shard-index-env JOB_COMPLETION_INDEX", "--start-at 2030-01-01T00:00:00Z")
			mustContain(t, "the merge's args", strings.Join(mergeArgs, " "), tt.merge...)
			if got := strings.Count(strings.Join(mergeArgs, " "), "--from "); strconv.Itoa(got) != n {
				t.Errorf("the merge fetches from %d shards, want %s", got, n)
			}
			out := filepath.Join(t.TempDir(), "m.yaml")
			var again bytes.Buffer
			if code := kubernetesCall(append(append(args[:1:1], "-o", out), args[1:]...), &again, &stderr); code != exitOK || again.Len() != 0 {
				t.Fatalf("with -o: exit %d, %d bytes on stdout", code, again.Len())
			}
			file, err := os.ReadFile(out)
			if err != nil || !bytes.Equal(file, bytes.ReplaceAll(stdout.Bytes(), []byte("kubernetes --image"), []byte("kubernetes -o "+out+" --image"))) {
				t.Errorf("-o wrote other manifests than stdout got (%v)", err)
			}
		})
	}
}

// TestKubernetesStartIn: without --start-at, the shards start --start-in
// from now (2m by default), and stderr says so.
func TestKubernetesStartIn(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		want  time.Duration
	}{
		{nil, 2 * time.Minute},
		{[]string{"--start-in", "5m"}, 5 * time.Minute},
	} {
		args := append(append([]string{"kubernetes", "--shards", "2", "--image", "i:1"}, tt.flags...), "--", "run", "tcp://rpc:9000", "--method", "m")
		var stdout, stderr bytes.Buffer
		before := time.Now()
		if code := realMain(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%q: exit %d; stderr:\n%s", args, code, &stderr)
		}
		_, rest, _ := strings.Cut(stdout.String(), "- --start-at\n")
		value, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		at, err := time.Parse(time.RFC3339, strings.Trim(strings.TrimPrefix(value, "- "), `"`))
		if err != nil {
			t.Fatalf("%q: the shards' --start-at %q: %v", args, value, err)
		}
		if d := at.Sub(before); d < tt.want-time.Second || d > tt.want+time.Second {
			t.Errorf("%q: the shards start %s from now, want %s", args, d, tt.want)
		}
		mustContain(t, "stderr", stderr.String(), "start at "+at.Format(time.RFC3339), "apply the manifests now", "kubectl logs -f job/rpcload-merge")
	}
}

// TestKubernetesUsageErrors: a bad call prints nothing on stdout, exits 2
// and says what is wrong, above all in the shards' command line, which
// rpcload run's own checks judge before N pods would.
func TestKubernetesUsageErrors(t *testing.T) {
	base := []string{"kubernetes", "--shards", "3", "--image", "i:1"}
	call := func(shard ...string) []string {
		return append(append(slices.Clone(base), "--"), append([]string{"run", "http://rpc:8545/", "--method", "m"}, shard...)...)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no command", base, []string{"after --"}},
		{"no shards", []string{"kubernetes", "--image", "i:1", "--", "run", "http://rpc:1/", "--method", "m"}, []string{"--shards N and --image IMAGE"}},
		{"no image", []string{"kubernetes", "--shards", "2", "--", "run", "http://rpc:1/", "--method", "m"}, []string{"--image"}},
		{"zero shards", append([]string{"kubernetes", "--shards", "0", "--image", "i:1", "--"}, call()[6:]...), []string{"--shards must be between 1 and 8192"}},
		{"too many shards", append([]string{"kubernetes", "--shards", "9000", "--image", "i:1", "--"}, call()[6:]...), []string{"--shards must be between 1 and 8192"}},
		{"word before --", append(slices.Clone(base), "run", "--", "run", "http://rpc:1/"), []string{`"run" before --`}},
		{"not run", append(slices.Clone(base), "--", "merge", "a.json"), []string{"must be rpcload run's"}},
		{"rpcload run", append(slices.Clone(base), "--", "rpcload", "run", "http://rpc:1/"), []string{"leave out the word rpcload"}},
		{"shard", call("--shard", "1/3"), []string{"--shard in the shards' command", "--shards"}},
		{"shard count", call("--shard-count", "3"), []string{"--shard-count in the shards' command"}},
		{"start-at", call("--start-at", "2030-01-01T00:00:00Z"), []string{"--start-at in the shards' command", "--start-in"}},
		{"output", call("-o", "r.json"), []string{"--output in the shards' command", "--upload"}},
		{"metrics", call("--metrics-addr", "127.0.0.1:9464"), []string{"--metrics-addr in the shards' command", "--metrics-port"}},
		{"threshold", call("--threshold", "p99<1s"), []string{"--threshold in the shards' command", "rpcload check"}},
		{"html", call("--html", "r.html"), []string{"--html in the shards' command", "rpcload report"}},
		{"compare", append(slices.Clone(base), "--", "run", "--target", "http://a:1/", "--target", "http://b:1/", "--method", "m"), []string{"--target in the shards' command"}},
		{"scenario", call("-f", "s.yaml"), []string{"--file in the shards' command"}},
		{"ca cert", call("--ca-cert", "ca.pem"), []string{"--ca-cert in the shards' command"}},
		{"server pid", call("--server-pid", "42"), []string{"--server-pid in the shards' command", "--server-metrics URL"}},
		{"unknown run flag", call("--bogus"), []string{"the shards' command", "unknown flag: --bogus"}},
		{"no method", append(slices.Clone(base), "--", "run", "http://rpc:1/"), []string{"--method is required"}},
		{"two targets", call("http://other:1/"), []string{"exactly one TARGET", "got 2"}},
		{"child process", append(slices.Clone(base), "--", "run", "--method", "m", "--", "rpcload", "serve", "--stdio"), []string{"would run in every shard's pod"}},
		{"loopback", append(slices.Clone(base), "--", "run", "http://127.0.0.1:8545/", "--method", "m"), []string{"loopback", "the pod itself"}},
		{"localhost", append(slices.Clone(base), "--", "run", "ws://localhost:8546/", "--method", "m"), []string{"loopback"}},
		{"unix socket", append(slices.Clone(base), "--", "run", "unix:///run/rpc.sock", "--method", "m"), []string{"Unix socket"}},
		{"concurrency below shards", call("-c", "2"), []string{"as shard 3 of 3", "--concurrency 2 cannot be split over 3 shards"}},
		{"bad name", append([]string{"kubernetes", "--name", "Load_Test"}, call()[1:]...), []string{`--name "Load_Test"`}},
		{"long name", append([]string{"kubernetes", "--name", strings.Repeat("a", 60)}, call()[1:]...), []string{"too long", "63"}},
		{"bad namespace", append([]string{"kubernetes", "--namespace", "Prod"}, call()[1:]...), []string{`--namespace "Prod"`}},
		{"both starts", append([]string{"kubernetes", "--start-at", "2030-01-01T00:00:00Z", "--start-in", "1m"}, call()[1:]...), []string{"--start-at or --start-in, not both"}},
		{"bad start", append([]string{"kubernetes", "--start-at", "tomorrow"}, call()[1:]...), []string{`--start-at: "tomorrow"`}},
		{"start passed", append([]string{"kubernetes", "--start-at", "2029-12-31T23:57:00Z"}, call()[1:]...), []string{"--start-at 2029-12-31T23:57:00Z: the start has passed"}},
		{"start far ahead", append([]string{"kubernetes", "--start-at", "2030-01-02T00:00:00Z"}, call()[1:]...), []string{"more than 24h ahead"}},
		{"zero start-in", append([]string{"kubernetes", "--start-in", "0s"}, call()[1:]...), []string{"--start-in 0s: the start has passed"}},
		{"same ports", append([]string{"kubernetes", "--result-port", "9464"}, call()[1:]...), []string{"--result-port and --metrics-port are both 9464"}},
		{"bad cpu", append([]string{"kubernetes", "--cpu", "two"}, call()[1:]...), []string{`--cpu "two"`, "quantities"}},
		{"tiny memory", append([]string{"kubernetes", "--memory", "8Mi"}, call()[1:]...), []string{"--memory 8Mi is below 16Mi"}},
		{"bad upload", append([]string{"kubernetes", "--upload", "s3://bucket/key"}, call()[1:]...), []string{"--upload", "not an http:// or https:// URL"}},
		{"bad secret", append([]string{"kubernetes", "--env-from-secret", "My Secret"}, call()[1:]...), []string{`--env-from-secret "My Secret"`}},
		{"negative keep", append([]string{"kubernetes", "--keep", "-1s"}, call()[1:]...), []string{"--keep"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := kubernetesCall(tt.args, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, &stderr)
			}
			if stdout.Len() > 0 {
				t.Errorf("manifests on stdout after an error:\n%s", &stdout)
			}
			mustContain(t, "stderr", stderr.String(), tt.want...)
		})
	}
}

// TestKubernetesSecretWarning: a secret header's value written into the
// manifests is warned about; one taken from a Secret ($(VAR)) is not.
func TestKubernetesSecretWarning(t *testing.T) {
	for _, tt := range []struct {
		header string
		warn   bool
	}{
		{"Authorization: Bearer sekrit", true},
		{"Authorization: Bearer $(TOKEN)", false},
		{"X-Trace: 1", false},
	} {
		args := []string{"kubernetes", "--shards", "2", "--image", "i:1", "--env-from-secret", "tokens", "--", "run", "https://rpc.example.com/", "--method", "m", "-H", tt.header}
		var stdout, stderr bytes.Buffer
		if code := realMain(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d; stderr:\n%s", tt.header, code, &stderr)
		}
		if got := strings.Contains(stderr.String(), "put it in a Secret"); got != tt.warn {
			t.Errorf("%s: warned %v, want %v; stderr:\n%s", tt.header, got, tt.warn, &stderr)
		}
		mustContain(t, "manifests", stdout.String(), tt.header, "secretRef:", "name: tokens")
	}
}

// TestShardIndexEnv: --shard-count N --shard-index-env VAR is --shard
// (VAR+1)/N, as a dry run's request ids show (shard i's come from
// (i-1)·2^40 + 1 on); a missing or bad index is a usage error.
func TestShardIndexEnv(t *testing.T) {
	const env = "RPCLOAD_TEST_SHARD_INDEX"
	tests := []struct {
		name, value string
		flags       []string
		wantID      string // the first request id, or "" for a usage error
		want        string // in stderr
	}{
		{"first", "0", []string{"--shard-count", "3", "--shard-index-env", env}, `"id":1,`, ""},
		{"last", "2", []string{"--shard-count", "3", "--shard-index-env", env}, `"id":2199023255553,`, ""},
		{"past the count", "3", []string{"--shard-count", "3", "--shard-index-env", env}, "", `"3" is not an index from 0 to 2`},
		{"not a number", "one", []string{"--shard-count", "3", "--shard-index-env", env}, "", `"one" is not an index`},
		{"unset", "", []string{"--shard-count", "3", "--shard-index-env", env}, "", "the variable is not set"},
		{"count alone", "0", []string{"--shard-count", "3"}, "", "go together"},
		{"env alone", "0", []string{"--shard-index-env", env}, "", "go together"},
		{"with --shard", "0", []string{"--shard-count", "3", "--shard-index-env", env, "--shard", "1/3"}, "", "replaces --shard"},
		{"zero count", "0", []string{"--shard-count", "0", "--shard-index-env", env}, "", "--shard-count must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(env, tt.value)
			args := append([]string{"run", deadTCP, "--method", "echo", "--dry-run", "1"}, tt.flags...)
			var stdout, stderr bytes.Buffer
			code := realMain(args, &stdout, &stderr)
			if tt.wantID == "" {
				if code != exitUsage {
					t.Errorf("exit %d, want 2", code)
				}
				mustContain(t, "stderr", stderr.String(), tt.want)
				return
			}
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, &stderr)
			}
			mustContain(t, "the dry run", stdout.String(), tt.wantID)
		})
	}
}

// TestKubernetesCommandLines: the command lines the manifests give the
// shards and the merge are ones rpcload run and rpcload merge take, every
// flag known to them, and pod i's run is shard i+1 of N.
func TestKubernetesCommandLines(t *testing.T) {
	probe, _ := newRunFlagSet(io.Discard, io.Discard)
	for _, name := range []string{"serve-result", "serve-result-any-host", "serve-result-timeout", "metrics-linger"} {
		if probe.Lookup(name) == nil {
			t.Skipf("rpcload run has no --%s yet (issue 20, parts A and B)", name)
		}
	}
	o := kube.Options{Name: "rpcload", Image: "i:1", Shards: 3, StartAt: time.Now().Add(time.Minute),
		Run:        []string{"run", "http://rpc.default.svc:8545/", "--method", "eth_blockNumber", "--rate", "300"},
		ResultPort: 8080, MetricsPort: 9464, ResultTimeout: time.Minute, MetricsLinger: time.Second, CPU: "1", Memory: "256Mi",
		MergeWait: time.Minute, Keep: time.Minute, AllowMissing: true, Upload: "http://store.example.com/r.json"}
	for i := range o.Shards {
		t.Setenv(kube.IndexEnv, string(rune('0'+i)))
		fs, f := newRunFlagSet(io.Discard, io.Discard)
		args := strings.ReplaceAll(strings.Join(o.ShardArgs()[1:], "\x00"), "$(POD_IP)", "127.0.0.1")
		if err := fs.Parse(strings.Split(args, "\x00")); err != nil {
			t.Fatalf("rpcload run refuses the shards' args %q: %v", o.ShardArgs(), err)
		}
		if _, err := f.targetConfig(fs, "", nil); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if want := string(rune('1'+i)) + "/3"; f.shard != want {
			t.Errorf("pod %d runs shard %s, want %s", i, f.shard, want)
		}
	}
	// --help after the args: merge parses them all first, and stops at
	// the first it does not know.
	var stdout, stderr bytes.Buffer
	if code := realMain(append(o.MergeArgs(), "--help"), &stdout, &stderr); code != exitOK {
		t.Errorf("rpcload merge refuses the merge's args %q: exit %d\n%s", o.MergeArgs(), code, &stderr)
	}
}
