package kubecheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/rpcload/rpcload/internal/kube"
)

// options is a run as rpcload kubernetes' defaults make it, of n shards.
func options(n int) kube.Options {
	return kube.Options{Name: "rpcload", Image: "registry.example.com/rpcload:1.0", Shards: n,
		StartAt:    time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		Run:        []string{"run", "http://jsonrpc-server.default.svc:8545/", "--method", "eth_blockNumber", "--rate", "3000", "--duration", "60s"},
		ResultPort: 8080, MetricsPort: 9464, ResultTimeout: 10 * time.Minute, MetricsLinger: time.Minute,
		CPU: "1", Memory: "256Mi", MergeWait: 15 * time.Minute, Keep: 10 * time.Minute, Command: "rpcload kubernetes ..."}
}

// TestManifests renders the manifests of several calls, and reads the
// example deploy/kubernetes/rpcload.yaml, decoding every document into the
// real API types and checking that they fit together.
func TestManifests(t *testing.T) {
	type variant struct {
		name string
		o    kube.Options
	}
	cases := []variant{{"one shard", options(1)}, {"three shards", options(3)}, {"ten shards", options(10)}}
	ns := options(10)
	ns.Name, ns.Namespace = "eth-load", "load-tests"
	cases = append(cases, variant{"a namespace and a name", ns})
	vol := options(3)
	vol.VolumeClaim, vol.PodMonitor, vol.AllowMissing = "rpcload-results", true, true
	vol.Upload, vol.EnvFromSecrets = "$(UPLOAD_URL)", []string{"rpcload-upload"}
	cases = append(cases, variant{"a volume, a PodMonitor, --allow-missing and --upload", vol})
	bare := options(4)
	bare.Keep, bare.ResultPort, bare.MetricsPort, bare.CPU, bare.Memory = 0, 7000, 7001, "500m", "48Mi"
	cases = append(cases, variant{"no keep, other ports, a small shard", bare})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := kube.Render(&b, c.o); err != nil {
				t.Fatal(err)
			}
			m := decode(t, b.Bytes())
			check(t, m, c.o.Shards, c.o.AllowMissing)
			if (m.podMonitor != nil) != c.o.PodMonitor {
				t.Errorf("a PodMonitor: %v, asked for: %v", m.podMonitor != nil, c.o.PodMonitor)
			}
			if c.o.Namespace != "" {
				for _, meta := range []metav1.ObjectMeta{m.service.ObjectMeta, m.shards.ObjectMeta, m.merge.ObjectMeta} {
					if meta.Namespace != c.o.Namespace {
						t.Errorf("%s is in namespace %q, want %q", meta.Name, meta.Namespace, c.o.Namespace)
					}
				}
			}
			checkKeep(t, m, c.o)
		})
	}
	t.Run("deploy/kubernetes/rpcload.yaml", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("..", "deploy", "kubernetes", "rpcload.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m := decode(t, data)
		check(t, m, 3, false)
	})
}

// manifests are the objects of one rendering, by role.
type manifests struct {
	service       *corev1.Service
	shards, merge *batchv1.Job
	podMonitor    *monitoringv1.PodMonitor
}

// decode reads every YAML document into its API type, strictly: a field
// the type does not have, a duplicate key or a value of the wrong type
// fails the test.
func decode(t *testing.T, data []byte) manifests {
	t.Helper()
	var m manifests
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("document %d: %v", n, err)
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			t.Fatalf("document %d: %v", n, err)
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(js, &tm); err != nil {
			t.Fatalf("document %d: %v", n, err)
		}
		var into any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 Service":
			m.service = new(corev1.Service)
			into = m.service
		case "batch/v1 Job":
			j := new(batchv1.Job)
			strict(t, n, js, j)
			switch j.Labels["app.kubernetes.io/component"] {
			case "shard":
				m.shards = j
			case "merge":
				m.merge = j
			default:
				t.Fatalf("document %d: Job %s is neither the shards nor the merge", n, j.Name)
			}
			continue
		case "monitoring.coreos.com/v1 PodMonitor":
			m.podMonitor = new(monitoringv1.PodMonitor)
			into = m.podMonitor
		default:
			t.Fatalf("document %d: unexpected %s %s", n, tm.APIVersion, tm.Kind)
		}
		strict(t, n, js, into)
	}
	if m.service == nil || m.shards == nil || m.merge == nil {
		t.Fatalf("want a Service and two Jobs; got %+v", m)
	}
	return m
}

func strict(t *testing.T, n int, js []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(js))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("document %d does not decode strictly into %T: %v", n, v, err)
	}
}

// check holds the manifests of a run of n shards to what rpcload
// kubernetes promises, reading everything from the objects themselves.
func check(t *testing.T, m manifests, n int, allowMissing bool) {
	t.Helper()
	checkNames(t, m, n)
	shard := checkShardJob(t, m, n, allowMissing)
	checkService(t, m, shard)
	checkMerge(t, m, n, shard)
	for _, j := range []*batchv1.Job{m.shards, m.merge} {
		checkRestricted(t, j)
		checkResources(t, j)
	}
	if pm := m.podMonitor; pm != nil {
		sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(m.shards.Spec.Template.Labels)) || sel.Matches(labels.Set(m.merge.Spec.Template.Labels)) {
			t.Errorf("the PodMonitor's selector %v does not select the shard pods alone (%v)", pm.Spec.Selector, err)
		}
		for _, e := range pm.Spec.PodMetricsEndpoints {
			if e.Port == nil || port(shard, *e.Port) == 0 {
				t.Errorf("the PodMonitor scrapes port %v, which the shard container does not name", e.Port)
			}
		}
	}
}

func checkNames(t *testing.T, m manifests, n int) {
	t.Helper()
	for _, e := range validation.IsDNS1035Label(m.service.Name) {
		t.Errorf("Service %q: %s", m.service.Name, e)
	}
	for _, j := range []*batchv1.Job{m.shards, m.merge} {
		for _, e := range validation.IsDNS1123Label(j.Name) {
			t.Errorf("Job %q: %s", j.Name, e)
		}
	}
	// The last pod's hostname is the longest.
	for _, e := range validation.IsDNS1123Label(fmt.Sprintf("%s-%d", m.shards.Name, n-1)) {
		t.Errorf("the hostname of shard pod %d: %s", n-1, e)
	}
}

// checkShardJob checks the Indexed Job and returns its container.
func checkShardJob(t *testing.T, m manifests, n int, allowMissing bool) corev1.Container {
	t.Helper()
	s := m.shards.Spec
	maxFailed := 0
	if allowMissing {
		maxFailed = n - 1
	}
	switch {
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	case s.Completions == nil || s.Parallelism == nil || int(*s.Completions) != n || int(*s.Parallelism) != n:
		t.Errorf("completions %v, parallelism %v; want both %d", s.Completions, s.Parallelism, n)
	case s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0:
		t.Errorf("backoffLimitPerIndex %v, want 0: a shard run again would be out of step", s.BackoffLimitPerIndex)
	case s.MaxFailedIndexes == nil || int(*s.MaxFailedIndexes) != maxFailed:
		t.Errorf("maxFailedIndexes %v, want %d", s.MaxFailedIndexes, maxFailed)
	case s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Errorf("restartPolicy %q, want Never (backoffLimitPerIndex needs it)", s.Template.Spec.RestartPolicy)
	case s.Template.Spec.Subdomain != m.service.Name:
		t.Errorf("subdomain %q, want the Service %q: the pods' DNS names come from it", s.Template.Spec.Subdomain, m.service.Name)
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers in a shard pod, want 1", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "run" || !slices.Equal(c.Command, []string{"rpcload"}) {
		t.Errorf("the shards run %q %q, want rpcload run", c.Command, c.Args)
	}
	result, metrics := port(c, "result"), port(c, "metrics")
	for flag, want := range map[string]string{
		"--shard-count": strconv.Itoa(n), "--shard-index-env": "JOB_COMPLETION_INDEX",
		"--serve-result": fmt.Sprintf("[$(POD_IP)]:%d", result), "--metrics-addr": fmt.Sprintf("[$(POD_IP)]:%d", metrics),
	} {
		if got := flagValue(c.Args, flag); got != want {
			t.Errorf("the shards' %s is %q, want %q", flag, got, want)
		}
	}
	if _, err := time.Parse(time.RFC3339, flagValue(c.Args, "--start-at")); err != nil {
		t.Errorf("the shards' --start-at: %v", err)
	}
	for _, flag := range []string{"--serve-result-any-host", "--metrics-any-host"} {
		if !slices.Contains(c.Args, flag) {
			t.Errorf("the shards' args lack %s", flag)
		}
	}
	if slices.Contains(c.Args, "--shard") || slices.Contains(c.Args, "-o") {
		t.Errorf("the shards' args give --shard or -o: %q", c.Args)
	}
	if env := envVar(c, "POD_IP"); env == nil || env.ValueFrom == nil || env.ValueFrom.FieldRef == nil || env.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("POD_IP is not the pod's address from the downward API: %+v", env)
	}
	a := s.Template.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(metrics) || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("the scrape annotations %v do not name the metrics port %d", a, metrics)
	}
	return c
}

func checkService(t *testing.T, m manifests, shard corev1.Container) {
	t.Helper()
	s := m.service.Spec
	if s.ClusterIP != corev1.ClusterIPNone || !s.PublishNotReadyAddresses {
		t.Errorf("Service: clusterIP %q, publishNotReadyAddresses %v; want None and true", s.ClusterIP, s.PublishNotReadyAddresses)
	}
	sel := labels.SelectorFromSet(s.Selector)
	if len(s.Selector) == 0 || !sel.Matches(labels.Set(m.shards.Spec.Template.Labels)) || sel.Matches(labels.Set(m.merge.Spec.Template.Labels)) {
		t.Errorf("the Service's selector %v does not select the shard pods alone", s.Selector)
	}
	for _, p := range s.Ports {
		if p.TargetPort.StrVal == "" || port(shard, p.TargetPort.StrVal) != int(p.Port) {
			t.Errorf("the Service's port %s (%d) does not match a shard container port (target %s)", p.Name, p.Port, p.TargetPort.String())
		}
	}
}

// checkMerge: the merge fetches from every shard pod's DNS name, made of
// the shard Job's name, the index and the pods' subdomain, on the port the
// shard container names result; it is not retried.
func checkMerge(t *testing.T, m manifests, n int, shard corev1.Container) {
	t.Helper()
	spec := m.merge.Spec
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 || spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("merge: backoffLimit %v, restartPolicy %q; want 0 and Never", spec.BackoffLimit, spec.Template.Spec.RestartPolicy)
	}
	c := container(t, m.merge, "merge")
	if len(c.Args) == 0 || c.Args[0] != "merge" {
		t.Fatalf("the merge runs %q", c.Args)
	}
	var from []string
	for i, a := range c.Args {
		if a == "--from" && i+1 < len(c.Args) {
			from = append(from, c.Args[i+1])
		}
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("http://%s-%d.%s:%d", m.shards.Name, i, m.shards.Spec.Template.Spec.Subdomain, port(shard, "result")))
	}
	if !slices.Equal(from, want) {
		t.Errorf("the merge fetches from %q, want the %d shard pods %q", from, n, want)
	}
	out := flagValue(c.Args, "-o")
	mounted := false
	for _, vm := range c.VolumeMounts {
		mounted = mounted || strings.HasPrefix(out, vm.MountPath+"/")
	}
	if !mounted {
		t.Errorf("the merge writes %q, on no volume of its own (the root filesystem is read-only)", out)
	}
}

// checkRestricted judges the Job's pod with the Pod Security admission's
// own checks at the restricted level, then checks the fields one by one.
func checkRestricted(t *testing.T, j *batchv1.Job) {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := j.Spec.Template
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, r := range ev.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			t.Errorf("Job %s: the restricted Pod Security Standard forbids %s: %s", j.Name, r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
	ps := pod.Spec
	sc := ps.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 ||
		sc.RunAsGroup == nil || *sc.RunAsGroup == 0 || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("Job %s: pod securityContext %+v: want runAsNonRoot, non-zero runAsUser and runAsGroup, seccomp RuntimeDefault", j.Name, sc)
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken || ps.HostNetwork || ps.HostPID || ps.HostIPC {
		t.Errorf("Job %s: the pod gets the API's token or a host namespace", j.Name)
	}
	for _, c := range append(slices.Clone(ps.InitContainers), ps.Containers...) {
		s := c.SecurityContext
		if s == nil || s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem ||
			s.Capabilities == nil || !slices.Contains(s.Capabilities.Drop, "ALL") || len(s.Capabilities.Add) > 0 || (s.Privileged != nil && *s.Privileged) {
			t.Errorf("Job %s, container %s: securityContext %+v: want no privilege escalation, a read-only root filesystem, every capability dropped", j.Name, c.Name, s)
		}
		if s != nil && s.RunAsUser != nil && *s.RunAsUser == 0 {
			t.Errorf("Job %s, container %s runs as root", j.Name, c.Name)
		}
	}
	vols := map[string]bool{}
	for _, v := range ps.Volumes {
		vols[v.Name] = true
		if v.EmptyDir == nil && v.PersistentVolumeClaim == nil {
			t.Errorf("Job %s: volume %s is neither an emptyDir nor a claim", j.Name, v.Name)
		}
	}
	for _, c := range ps.Containers {
		for _, vm := range c.VolumeMounts {
			if !vols[vm.Name] {
				t.Errorf("Job %s, container %s mounts %s, which the pod does not have", j.Name, c.Name, vm.Name)
			}
		}
	}
}

// checkResources: every container requests CPU and memory and has a
// memory limit no lower than its request.
func checkResources(t *testing.T, j *batchv1.Job) {
	t.Helper()
	for _, c := range j.Spec.Template.Spec.Containers {
		req, lim := c.Resources.Requests, c.Resources.Limits
		cpu, mem, memLimit := req[corev1.ResourceCPU], req[corev1.ResourceMemory], lim[corev1.ResourceMemory]
		if cpu.IsZero() || mem.IsZero() || memLimit.IsZero() || mem.Cmp(memLimit) > 0 {
			t.Errorf("Job %s, container %s: requests %v, limits %v: want CPU and memory requested, and a memory limit at least the request", j.Name, c.Name, req, lim)
		}
		if _, ok := lim[corev1.ResourceCPU]; ok {
			t.Errorf("Job %s, container %s has a CPU limit: throttling would show up as latency", j.Name, c.Name)
		}
	}
}

// checkKeep: with Keep the merge pod holds a keep container (and kubectl
// logs shows the merge); without, the merge runs rpcload alone.
func checkKeep(t *testing.T, m manifests, o kube.Options) {
	t.Helper()
	pod := m.merge.Spec.Template
	names := []string{}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	if o.Keep == 0 {
		if c := container(t, m.merge, "merge"); len(names) != 1 || !slices.Equal(c.Command, []string{"rpcload"}) {
			t.Errorf("--keep 0: containers %v, the merge's command %q; want the merge alone, rpcload without a shell", names, c.Command)
		}
		return
	}
	keep := container(t, m.merge, "keep")
	if pod.Annotations["kubectl.kubernetes.io/default-container"] != "merge" || !strings.Contains(strings.Join(keep.Command, " "), "sleep "+strconv.Itoa(int(o.Keep.Seconds()))) {
		t.Errorf("the keep container %q, annotations %v: want it to sleep %s, and kubectl logs to show the merge", keep.Command, pod.Annotations, o.Keep)
	}
	if o.VolumeClaim != "" {
		found := false
		for _, v := range pod.Spec.Volumes {
			found = found || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == o.VolumeClaim
		}
		if !found {
			t.Errorf("the merge pod does not mount the claim %s", o.VolumeClaim)
		}
	}
}

func container(t *testing.T, j *batchv1.Job, name string) corev1.Container {
	t.Helper()
	for _, c := range j.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("Job %s has no container %s", j.Name, name)
	return corev1.Container{}
}

// port is the number of the container's port of that name, or 0.
func port(c corev1.Container, name string) int {
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort)
		}
	}
	return 0
}

func envVar(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// flagValue is the argument after flag in args, or "".
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}
