package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/kube"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

var kubernetesHelp = cmdHelp{
	usage: []string{"rpcload kubernetes --shards N --image IMAGE [flags] -- run TARGET [run flags]"},
	about: `Prints the Kubernetes manifests of one load test split over N pods, ready for
kubectl apply -f -: a headless Service; an Indexed Job of N shards, pod i
running the command after -- as shard i+1 of N, all starting at one instant
(--start-in or --start-at) and each serving its result over HTTP on its pod's
address; and a merge Job that fetches the N results from the pods' DNS names,
merges them exactly and prints the report in its log (kubectl logs -f
job/NAME-merge). A shard that fails fails the merge within seconds, naming it.
Plain Jobs and DNS: no shared volume, no controller; Kubernetes 1.29 or later.
Every pod runs under the restricted Pod Security Standard.

After -- comes the command every shard runs, as rpcload run takes it, with the
target as the pods reach it; rpcload kubernetes adds --shard-count,
--shard-index-env, --start-at, --serve-result and --metrics-addr itself, and
refuses them there. Its own flags go before the --. The image is the one
deploy/kubernetes/Dockerfile builds (deploy/kubernetes/README.md).`,
	examples: []string{
		"rpcload kubernetes --shards 10 --image registry.example.com/rpcload:1.0 -- run http://rpc.default.svc:8545/ --method eth_blockNumber --rate 50000 --duration 5m | kubectl apply -f -",
		"rpcload kubernetes --shards 3 --image registry.example.com/rpcload:1.0 --namespace load --pod-monitor -o rpcload.yaml -- run ws://rpc.chain.svc:8546/ --method eth_chainId -c 300 -d 10m",
	},
}

// kubernetesFlags are rpcload kubernetes' own flags: the manifests'
// options, and how the start time and the output are given.
type kubernetesFlags struct {
	opts    kube.Options
	startAt string
	startIn time.Duration
	output  string
}

func (k *kubernetesFlags) register(fs *pflag.FlagSet) {
	o := &k.opts
	fs.IntVar(&o.Shards, "shards", 0, "the number of shards, each a pod sending 1/N of the load (required)")
	fs.StringVar(&o.Image, "image", "", "the image the pods run: rpcload and busybox, built from deploy/kubernetes/Dockerfile (required)")
	fs.StringVar(&o.Name, "name", "rpcload", "the name of the Service and the shard Job; the merge Job is NAME-merge")
	fs.StringVar(&o.Namespace, "namespace", "", "the namespace of every object (default: kubectl's current one)")
	fs.StringVar(&k.startAt, "start-at", "", "the instant every shard starts its schedule, RFC 3339 (instead of --start-in)")
	fs.DurationVar(&k.startIn, "start-in", 2*time.Minute, "start the shards this long after now: time for the pods to be scheduled, pull the image and connect")
	fs.StringVar(&o.CPU, "cpu", "1", "each shard's CPU request (no limit: throttling would show up as latency)")
	fs.StringVar(&o.Memory, "memory", "256Mi", "each shard's memory limit (the request is 64Mi, twice rpcload's peak RSS at 100,000 requests in flight)")
	fs.IntVar(&o.ResultPort, "result-port", 8080, "the port each shard serves its result on")
	fs.IntVar(&o.MetricsPort, "metrics-port", 9464, "the port each shard serves its Prometheus metrics on")
	fs.DurationVar(&o.ResultTimeout, "result-timeout", 10*time.Minute, "how long a shard serves its result after its run when the merge has not fetched it")
	fs.DurationVar(&o.MetricsLinger, "metrics-linger", time.Minute, "how long a shard's metrics stay up after its run, for the last scrape")
	fs.DurationVar(&o.MergeWait, "merge-wait", 15*time.Minute, "how long the merge waits for a shard that has not answered yet (its --wait): a pod pending, or pulling the image")
	fs.BoolVar(&o.AllowMissing, "allow-missing", false, "merge without the shards that failed (the result is marked partial), and let the other shards go on")
	fs.StringVar(&o.Upload, "upload", "", "the merge also sends the merged result to this URL (the merge's --upload; $(VAR) takes it from --env-from-secret)")
	fs.DurationVar(&o.Keep, "keep", 10*time.Minute, "the merge pod keeps the merged result this long for kubectl cp; 0: no keep container, and no shell")
	fs.StringVar(&o.VolumeClaim, "volume-claim", "", "write the merged result to this PersistentVolumeClaim (one pod writes it: ReadWriteOnce is enough)")
	fs.StringArrayVar(&o.EnvFromSecrets, "env-from-secret", nil, "the keys of this Secret become environment variables of the shards and the merge, for $(VAR) in their args, such as -H 'Authorization: Bearer $(TOKEN)' (repeatable)")
	fs.BoolVar(&o.PodMonitor, "pod-monitor", false, "also print a PodMonitor for the Prometheus Operator (a custom resource; the scrape annotations are always there)")
	fs.StringVarP(&k.output, "output", "o", "", "write the manifests to this file instead of stdout")
}

// kubernetesCmd is "rpcload kubernetes ... -- run ...": the manifests of a
// distributed run on stdout (or -o).
func kubernetesCmd(args []string, stdout, stderr io.Writer) (int, error) {
	return kubernetesAt(args, time.Now(), stdout, stderr)
}

// kubernetesAt is kubernetesCmd at the time now.
func kubernetesAt(args []string, now time.Time, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("kubernetes", kubernetesHelp, stdout, stderr)
	var k kubernetesFlags
	k.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	switch dash := fs.ArgsLenAtDash(); {
	case dash < 0:
		return exitUsage, usagef("give the command every shard runs after --: rpcload kubernetes --shards N --image IMAGE -- run TARGET --method NAME ...")
	case dash > 0:
		return exitUsage, usagef("%q before --: rpcload kubernetes' own flags go before --, the shards' command after it", fs.Arg(0))
	}
	o := &k.opts
	if !fs.Changed("shards") || !fs.Changed("image") {
		return exitUsage, usagef("rpcload kubernetes needs --shards N and --image IMAGE")
	}
	if o.Shards < 1 || o.Shards > workload.MaxShards {
		return exitUsage, usagef("--shards must be between 1 and %d (got %d)", workload.MaxShards, o.Shards)
	}
	o.Run = fs.Args()
	if err := checkShardRun(o.Run, o.Shards, stderr); err != nil {
		return exitUsage, err
	}
	if err := k.start(fs, now); err != nil {
		return exitUsage, err
	}
	if err := checkUpload(o.Upload); err != nil {
		return exitUsage, err
	}
	quoted := []string{"rpcload", "kubernetes"}
	for _, a := range args {
		quoted = append(quoted, fuzz.ShellQuote(a))
	}
	o.Command = strings.Join(quoted, " ")
	var b bytes.Buffer
	if err := kube.Render(&b, *o); err != nil {
		return exitUsage, cli.UsageError{Err: err}
	}
	if k.output == "" || k.output == stdoutPath {
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return exitUsage, fmt.Errorf("writing the manifests: %w", err)
		}
	} else if err := os.WriteFile(k.output, b.Bytes(), 0o644); err != nil {
		return exitUsage, fmt.Errorf("writing the manifests: %w", err)
	}
	start := o.StartAt.UTC().Format(time.RFC3339)
	in := (o.StartAt.Sub(now) + time.Second - 1).Truncate(time.Second)
	fmt.Fprintf(stderr, "rpcload kubernetes: %d shards start at %s, in %s: apply the manifests now; then kubectl logs -f job/%s\n", o.Shards, start, in, o.MergeJobName())
	return exitOK, nil
}

// start sets the shards' start time: --start-at as given, or --start-in
// from now, to the second. A time past would start each shard when its pod
// is up, out of step; one more than engine.MaxStartWait ahead the shards
// refuse.
func (k *kubernetesFlags) start(fs *pflag.FlagSet, now time.Time) error {
	if fs.Changed("start-at") && fs.Changed("start-in") {
		return usagef("give --start-at or --start-in, not both")
	}
	name := "--start-in " + k.startIn.String()
	if k.startAt == "" {
		k.opts.StartAt = now.Truncate(time.Second).Add(k.startIn)
	} else {
		t, err := time.Parse(time.RFC3339, k.startAt)
		if err != nil {
			return usagef("--start-at: %q is not an RFC 3339 time like 2026-12-02T15:04:05Z", k.startAt)
		}
		k.opts.StartAt, name = t, "--start-at "+k.startAt
	}
	switch in := k.opts.StartAt.Sub(now); {
	case in <= 0:
		return usagef("%s: the start has passed; give the pods time to be scheduled, pull the image and connect (--start-in 2m, the default)", name)
	case in > engine.MaxStartWait:
		return usagef("%s is more than %s ahead, longer than a shard waits", name, kube.Duration(engine.MaxStartWait))
	}
	return nil
}

// podReachable refuses a target that would be each pod itself: a loopback
// address, or a Unix socket.
func podReachable(t transport.Target) error {
	if t.Scheme == transport.Unix || t.Scheme == transport.UnixLSP {
		return usagef("the target %s is a Unix socket, which would be inside each shard's pod: give an address the pods reach over the network", t.URL)
	}
	host := t.Addr
	if u, err := url.Parse(t.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback() {
		return usagef("the target %s is a loopback address: in a pod that is the pod itself; give the server's address as the pods reach it (a Service's DNS name, or an outside URL)", t.URL)
	}
	return nil
}

// checkUpload accepts an http(s) URL, or one taken from the environment
// ($(VAR), which Kubernetes replaces).
func checkUpload(s string) error {
	if s == "" || strings.Contains(s, "$(") {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--upload %q is not an http:// or https:// URL", s)
	}
	return nil
}

// shardRunRefused are the flags of rpcload run a shard's command may not
// give, with why and what to do instead.
var shardRunRefused = []struct {
	flags []string
	why   string
}{
	{[]string{"shard", "shard-count", "shard-index-env"}, "rpcload kubernetes gives each pod its shard: give the number with --shards, before --"},
	{[]string{"start-at"}, "rpcload kubernetes sets the start: give --start-at or --start-in before --"},
	{[]string{"output"}, "each shard serves its result to the merge over HTTP; the merged result is the merge's (--keep, --upload or --volume-claim, before --)"},
	{[]string{"serve-result", "serve-result-any-host", "serve-result-timeout"}, "rpcload kubernetes serves each shard's result on its pod's address (--result-port, --result-timeout, before --)"},
	{[]string{"metrics-addr", "metrics-any-host", "metrics-linger"}, "rpcload kubernetes serves each shard's metrics on its pod's address (--metrics-port, --metrics-linger, before --)"},
	{[]string{"threshold", "max-error-rate", "junit"}, "a gate on a shard judges 1/N of the test: gate the merged result instead (rpcload check total.json --threshold ...)"},
	{[]string{"html", "hlog", "series"}, "a shard's files stay in its pod and go with it: write them from the merged result (rpcload report total.json --html FILE)"},
	{[]string{"target", "rounds", "diff", "diff-ignore", "diff-samples"}, "comparing servers does not split over shards: run it on one machine"},
	{[]string{"dry-run"}, "it sends nothing: run rpcload run ... --dry-run N on your machine"},
	{[]string{"file"}, "a scenario file would have to be in every shard's pod, which rpcload kubernetes does not arrange: give the load as flags"},
	{[]string{"ca-cert", "client-cert", "client-key", "open", "workspace"}, "the file would have to be in every shard's pod, which rpcload kubernetes does not arrange"},
	{[]string{"server-pid"}, "a process id names a process of the shard's own pod, not the server's: give the server's metrics with --server-metrics URL"},
}

// checkShardRun checks the shards' command line with rpcload run's own
// flags and checks, as the last of the shards: what it would refuse, and the
// flags the manifests set themselves, fail here rather than in N pods.
// stderr gets a warning for a secret written into the manifests.
func checkShardRun(run []string, shards int, stderr io.Writer) error {
	if len(run) == 0 || run[0] != "run" {
		hint := ""
		if len(run) > 0 && run[0] == "rpcload" {
			hint = " (leave out the word rpcload)"
		}
		return usagef("the command after -- must be rpcload run's: -- run TARGET --method NAME ...%s", hint)
	}
	fs, f := newRunFlagSet(io.Discard, io.Discard)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(run[1:]); err != nil {
		return usagef("the shards' command (after --): %v", err)
	}
	for _, r := range shardRunRefused {
		for _, name := range r.flags {
			if fs.Lookup(name) != nil && fs.Changed(name) {
				return usagef("--%s in the shards' command (after --): %s", name, r.why)
			}
		}
	}
	switch {
	case fs.ArgsLenAtDash() >= 0:
		return usagef("a command after -- in the shards' command would run in every shard's pod: a distributed run loads a server the pods reach over the network")
	case fs.NArg() != 1:
		return usagef("the shards' command takes exactly one TARGET, as the pods reach it (got %d)", fs.NArg())
	}
	if err := f.secret.Check(); err != nil {
		return err
	}
	if err := f.gate.parse(); err != nil {
		return err
	}
	if err := f.mal.check(fs); err != nil {
		return err
	}
	// The last shard gets the least of a divided concurrency.
	f.shard = fmt.Sprintf("%d/%d", shards, shards)
	cfg, err := f.targetConfig(fs, "", nil)
	if err != nil {
		return fmt.Errorf("the shards' command (after --), as shard %d of %d: %w", shards, shards, err)
	}
	if err := podReachable(cfg.Target); err != nil {
		return err
	}
	for _, h := range cli.HeaderSecrets(f.headers, f.secret.Names) {
		if !strings.Contains(h, "$(") {
			fmt.Fprintln(stderr, "rpcload kubernetes: warning: a secret header's value is written into the shard Job's args, for anyone who can read Jobs; put it in a Secret instead: --env-from-secret NAME and -H 'Authorization: Bearer $(TOKEN)'")
			break
		}
	}
	return nil
}
