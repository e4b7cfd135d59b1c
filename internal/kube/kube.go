// Package kube renders the Kubernetes manifests of one distributed rpcload
// run (rpcload kubernetes): a headless Service that gives every shard pod a
// stable DNS name, an Indexed Job whose N pods each run one shard of the
// load from a common start time and serve their result over HTTP, and a
// merge Job that fetches the N results, merges them exactly and prints the
// report. Plain Jobs and DNS: no volume, no controller, no custom resource
// (but the optional PodMonitor).
package kube

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Options are the settings of one distributed run. The command fills in
// every field; Validate says which one is wrong.
type Options struct {
	Name      string // the Service and the shard Job; the merge Job is Name-merge
	Namespace string // "" leaves it to kubectl's current namespace
	Image     string // holds rpcload on PATH, and busybox for the merge pod's keep (deploy/kubernetes/Dockerfile)
	Shards    int
	StartAt   time.Time // when every shard starts its schedule
	// Run is the command line every shard runs, "run" first, without the
	// flags the manifests add (ShardArgs).
	Run           []string
	ResultPort    int           // each shard serves its result here
	MetricsPort   int           // and its Prometheus metrics here
	ResultTimeout time.Duration // how long a shard serves its result when nobody fetches it
	MetricsLinger time.Duration // how long a shard's metrics stay up after its run
	CPU           string        // a shard's CPU request (a Kubernetes quantity)
	Memory        string        // a shard's memory limit (a Kubernetes quantity)
	MergeWait     time.Duration // the merge's --wait
	AllowMissing  bool          // the merge goes on without failed shards, and the Job lets them fail
	Upload        string        // the merge's --upload URL, or ""
	// Keep is how long the merge pod keeps the merged result for kubectl
	// cp after the merge; 0 runs the merge alone, without a shell.
	Keep           time.Duration
	VolumeClaim    string   // a PersistentVolumeClaim for the merged result, or "" for the pod's own emptyDir
	EnvFromSecrets []string // Secrets whose keys become environment variables of the shards and the merge, for $(VAR) in their args
	PodMonitor     bool     // also render a Prometheus Operator PodMonitor
	Command        string   // the command line that generated the manifests, quoted, for their first comment
}

// IndexEnv is the environment variable in which Kubernetes gives each pod
// of an Indexed Job its index, 0 to N-1.
const IndexEnv = "JOB_COMPLETION_INDEX"

const (
	// nonRoot is the user and group the pods run as: the image's
	// (deploy/kubernetes/Dockerfile), "nonroot" of the distroless images.
	nonRoot = 65532
	// resultsDir holds the merged result in the merge pod; scratchDir is
	// every pod's writable directory (the root filesystem is read-only).
	resultsDir = "/results"
	scratchDir = "/tmp"
	// mergeDone is the file the merge container leaves when rpcload merge
	// has ended, which the keep container waits for.
	mergeDone = scratchDir + "/merge-done"
)

// MergeJobName is the name of the merge Job (and of its pod's prefix).
func (o Options) MergeJobName() string { return o.Name + "-merge" }

// ShardHost is the DNS name of shard pod i (0-based): its hostname (the
// Job's name and the index) in the headless Service's subdomain. It
// resolves in the pods' namespace; other namespaces add .NAMESPACE.svc.
func (o Options) ShardHost(i int) string { return fmt.Sprintf("%s-%d.%s", o.Name, i, o.Name) }

// ShardURL is where shard pod i serves its result.
func (o Options) ShardURL(i int) string {
	return fmt.Sprintf("http://%s:%d", o.ShardHost(i), o.ResultPort)
}

// podAddr is a listen address on the pod's own IP (from the downward API),
// bracketed so that an IPv6 address works as well as an IPv4 one.
func podAddr(port int) string { return "[$(POD_IP)]:" + strconv.Itoa(port) }

// ShardArgs is the command line of every shard pod: Run, then what makes it
// one shard of the distributed run. Kubernetes replaces $(POD_IP) as it
// starts the container; the shard reads its index from IndexEnv.
func (o Options) ShardArgs() []string {
	a := append([]string(nil), o.Run...)
	a = append(a,
		"--shard-count", strconv.Itoa(o.Shards), "--shard-index-env", IndexEnv,
		"--start-at", o.StartAt.UTC().Format(time.RFC3339),
		"--serve-result", podAddr(o.ResultPort), "--serve-result-any-host", "--serve-result-timeout", Duration(o.ResultTimeout),
		"--metrics-addr", podAddr(o.MetricsPort), "--metrics-any-host", "--metrics-linger", Duration(o.MetricsLinger))
	// A shard that saw timeouts or violations has still done its part: the
	// merge judges the whole test, and a failed pod would read as a crash.
	if !contains(o.Run, "--allow-violations") {
		a = append(a, "--allow-violations")
	}
	return a
}

// MergeArgs is the merge's command line: every shard's URL, in index order.
func (o Options) MergeArgs() []string {
	a := []string{"merge"}
	for i := range o.Shards {
		a = append(a, "--from", o.ShardURL(i))
	}
	a = append(a, "--wait", Duration(o.MergeWait))
	if o.AllowMissing {
		a = append(a, "--allow-missing")
	}
	if o.Upload != "" {
		a = append(a, "--upload", o.Upload)
	}
	return append(a, "-o", o.ResultPath())
}

// ResultPath is where the merge pod writes the merged result: total.json
// in its own emptyDir, or a name of its own on a volume that keeps the
// results of many runs.
func (o Options) ResultPath() string {
	if o.VolumeClaim == "" {
		return resultsDir + "/total.json"
	}
	return fmt.Sprintf("%s/%s-%s.json", resultsDir, o.Name, o.StartAt.UTC().Format("20060102T150405Z"))
}

// Duration writes d as Go parses it, without the zero units time.Duration's
// String adds (10m, not 10m0s).
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	// dns1035 is a Service's name: a lower-case letter, then letters,
	// digits and hyphens, not ending in a hyphen.
	dns1035 = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	// dns1123 is a namespace's name (a label), and a claim's or a Secret's
	// (a subdomain: labels joined by dots).
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	quantity         = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$`)
)

// Validate checks the options, each error naming the flag of rpcload
// kubernetes that sets the field.
func (o Options) Validate() error {
	host := len(o.Name) + 1 + len(strconv.Itoa(o.Shards-1))
	switch {
	case !dns1035.MatchString(o.Name):
		return fmt.Errorf("--name %q: a Kubernetes name is lower-case letters, digits and '-', starting with a letter and not ending with '-'", o.Name)
	case host > 63 || len(o.MergeJobName()) > 63:
		return fmt.Errorf("--name %q is too long: the pods' hostnames (%s) and the merge Job's name (%s) must be at most 63 characters", o.Name, o.ShardHost(o.Shards-1), o.MergeJobName())
	case o.Namespace != "" && (len(o.Namespace) > 63 || !dns1123Label.MatchString(o.Namespace)):
		return fmt.Errorf("--namespace %q is not a namespace's name (lower-case letters, digits and '-', at most 63)", o.Namespace)
	case o.Image == "" || strings.ContainsAny(o.Image, " \t\n"):
		return fmt.Errorf("--image %q: give the image you built from deploy/kubernetes/Dockerfile, e.g. registry.example.com/rpcload:1.0", o.Image)
	case o.Shards < 1:
		return fmt.Errorf("--shards must be at least 1 (got %d)", o.Shards)
	case o.StartAt.IsZero():
		return fmt.Errorf("no start time (--start-at or --start-in)")
	case len(o.Run) == 0 || o.Run[0] != "run":
		return fmt.Errorf("the command after -- must be rpcload's run: -- run TARGET [flags]")
	case o.ResultPort < 1 || o.ResultPort > 65535 || o.MetricsPort < 1 || o.MetricsPort > 65535:
		return fmt.Errorf("--result-port %d and --metrics-port %d must be ports, 1 to 65535", o.ResultPort, o.MetricsPort)
	case o.ResultPort == o.MetricsPort:
		return fmt.Errorf("--result-port and --metrics-port are both %d: give them different ports", o.ResultPort)
	case o.ResultTimeout <= 0 || o.MergeWait <= 0:
		return fmt.Errorf("--result-timeout (%s) and --merge-wait (%s) must be positive", o.ResultTimeout, o.MergeWait)
	case o.MetricsLinger < 0 || o.Keep < 0:
		return fmt.Errorf("--metrics-linger (%s) and --keep (%s) must not be negative", o.MetricsLinger, o.Keep)
	case !quantity.MatchString(o.CPU) || !quantity.MatchString(o.Memory):
		return fmt.Errorf("--cpu %q and --memory %q must be Kubernetes quantities, such as 500m, 2, 256Mi or 1Gi", o.CPU, o.Memory)
	case o.VolumeClaim != "" && !dns1123Subdomain.MatchString(o.VolumeClaim):
		return fmt.Errorf("--volume-claim %q is not a claim's name", o.VolumeClaim)
	}
	if b, _ := quantityBytes(o.Memory); b < 16<<20 {
		return fmt.Errorf("--memory %s is below 16Mi, too little for one rpcload (docs/benchmarks.md: 30 MiB of RSS at 1,000 requests in flight)", o.Memory)
	}
	for _, s := range o.EnvFromSecrets {
		if !dns1123Subdomain.MatchString(s) {
			return fmt.Errorf("--env-from-secret %q is not a Secret's name", s)
		}
	}
	return nil
}

// quantityBytes is a memory quantity in bytes (Kubernetes' suffixes).
func quantityBytes(q string) (float64, bool) {
	m := quantity.FindStringSubmatch(q)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	unit := map[string]float64{"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}[m[3]]
	return n * unit, true
}
