package kube

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Render writes the manifests of the run as YAML documents, ready for
// kubectl apply -f: the headless Service, the PodMonitor if asked for, the
// shard Job and the merge Job, each with comments that say why it is so.
func Render(w io.Writer, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	type document struct {
		object any
		head   string
		notes  map[string]string
	}
	docs := []document{{o.service(), o.fileComment() + "\n\n" + o.serviceComment(), nil}}
	if o.PodMonitor {
		docs = append(docs, document{o.podMonitor(), podMonitorComment, nil})
	}
	docs = append(docs, document{o.shardJob(), o.shardJobComment(), o.shardJobNotes()},
		document{o.mergeJob(), o.mergeJobComment(), o.mergeJobNotes()})
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	for _, d := range docs {
		n, err := commented(d.object, d.head, d.notes)
		if err != nil {
			return err
		}
		if err := enc.Encode(n); err != nil {
			return fmt.Errorf("writing the manifests: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("writing the manifests: %w", err)
	}
	return nil
}

// commented is v as a YAML node with head above it and each note above
// the field at its path (dot-separated keys; a number indexes a list).
func commented(v any, head string, notes map[string]string) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the manifests: %w", err)
	}
	n.HeadComment = head
	for path, note := range notes {
		key := lookup(&n, strings.Split(path, "."))
		if key == nil {
			return nil, fmt.Errorf("encoding the manifests: no field %s to comment on", path)
		}
		key.HeadComment = note
	}
	return &n, nil
}

// lookup finds the key node of the field at path in n (for a list item,
// the item), or nil.
func lookup(n *yaml.Node, path []string) *yaml.Node {
	for i, step := range path {
		var next, key *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == step {
					key, next = n.Content[j], n.Content[j+1]
				}
			}
		case yaml.SequenceNode:
			if k, err := strconv.Atoi(step); err == nil && k >= 0 && k < len(n.Content) {
				key, next = n.Content[k], n.Content[k]
			}
		}
		if next == nil {
			return nil
		}
		if i == len(path)-1 {
			return key
		}
		n = next
	}
	return nil
}

func (o Options) meta(name, component string) meta {
	return meta{Name: name, Namespace: o.Namespace, Labels: o.labels(component)}
}

// labels are the recommended app.kubernetes.io labels; instance tells two
// runs of different names apart, component shards from the merge.
func (o Options) labels(component string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "rpcload", "app.kubernetes.io/instance": o.Name, "app.kubernetes.io/component": component}
}

func (o Options) service() service {
	return service{APIVersion: "v1", Kind: "Service", Metadata: o.meta(o.Name, "shard"),
		Spec: serviceSpec{ClusterIP: "None", PublishNotReadyAddresses: true, Selector: o.labels("shard"),
			Ports: []servicePort{{Name: "result", Port: o.ResultPort, TargetPort: "result"}, {Name: "metrics", Port: o.MetricsPort, TargetPort: "metrics"}}}}
}

func (o Options) podMonitor() podMonitor {
	return podMonitor{APIVersion: "monitoring.coreos.com/v1", Kind: "PodMonitor", Metadata: o.meta(o.Name, "shard"),
		Spec: podMonitorSpec{Selector: labelSelector{MatchLabels: o.labels("shard")},
			PodMetricsEndpoints: []podMetricsEndpoint{{Port: "metrics", Path: "/metrics"}}}}
}

func (o Options) shardJob() job {
	n, perIndex, maxFailed := o.Shards, 0, 0
	if o.AllowMissing {
		maxFailed = n - 1
	}
	c := o.container("rpcload", []string{"rpcload"}, o.ShardArgs())
	c.Env = []envVar{fieldEnv("POD_IP", "status.podIP")}
	c.Ports = []containerPort{{Name: "result", ContainerPort: o.ResultPort}, {Name: "metrics", ContainerPort: o.MetricsPort}}
	c.Resources = resources{Requests: map[string]string{"cpu": o.CPU, "memory": o.shardMemoryRequest()}, Limits: map[string]string{"memory": o.Memory}}
	c.VolumeMounts = []volumeMount{{Name: "scratch", MountPath: scratchDir}}
	spec := o.podSpec([]container{c}, scratch())
	spec.Subdomain = o.Name
	// One shard per node where the cluster allows it: shards that share a
	// node share its CPUs and network card, which is what sharding avoids.
	spec.TopologySpreadConstraints = []topologySpread{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
		WhenUnsatisfiable: "ScheduleAnyway", LabelSelector: labelSelector{MatchLabels: o.labels("shard")}}}
	return job{APIVersion: "batch/v1", Kind: "Job", Metadata: o.meta(o.Name, "shard"),
		Spec: jobSpec{CompletionMode: "Indexed", Completions: &n, Parallelism: &n, BackoffLimitPerIndex: &perIndex, MaxFailedIndexes: &maxFailed,
			Template: podTemplate{
				Metadata: templateMeta{Labels: o.labels("shard"), Annotations: map[string]string{
					"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(o.MetricsPort), "prometheus.io/path": "/metrics"}},
				Spec: spec}}}
}

func (o Options) mergeJob() job {
	backoff := 0
	results := volume{Name: "results", EmptyDir: &emptyDir{SizeLimit: "1Gi"}}
	if o.VolumeClaim != "" {
		results = volume{Name: "results", PersistentVolumeClaim: &persistentVolumeClaim{ClaimName: o.VolumeClaim}}
	}
	mounts := []volumeMount{{Name: "results", MountPath: resultsDir}, {Name: "scratch", MountPath: scratchDir}}
	m := o.container("merge", []string{"rpcload"}, o.MergeArgs())
	mem := o.mergeMemory()
	m.Resources = resources{Requests: map[string]string{"cpu": "100m", "memory": mem}, Limits: map[string]string{"memory": mem}}
	m.VolumeMounts = mounts
	containers := []container{m}
	var annotations map[string]string
	if o.Keep > 0 {
		m.Command = []string{"/bin/sh", "-c", o.mergeScript(), "sh"}
		m.Env = []envVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace")}
		keep := o.container("keep", []string{"/bin/sh", "-c", o.keepScript()}, nil)
		keep.EnvFrom = nil
		keep.Resources = resources{Requests: map[string]string{"cpu": "10m", "memory": "32Mi"}, Limits: map[string]string{"memory": "32Mi"}}
		keep.VolumeMounts = mounts
		containers = []container{m, keep}
		// kubectl logs job/NAME-merge shows the merge, not the keep.
		annotations = map[string]string{"kubectl.kubernetes.io/default-container": "merge"}
	}
	return job{APIVersion: "batch/v1", Kind: "Job", Metadata: o.meta(o.MergeJobName(), "merge"),
		Spec: jobSpec{BackoffLimit: &backoff, Template: podTemplate{
			Metadata: templateMeta{Labels: o.labels("merge"), Annotations: annotations},
			Spec:     o.podSpec(containers, results, scratch())}}}
}

// mergeScript runs rpcload merge with the container's args, then tells
// the keep container it has ended and says how to copy the result.
func (o Options) mergeScript() string {
	path := o.ResultPath()
	return strings.Join([]string{
		`rpcload "$@"`,
		`code=$?`,
		`touch ` + mergeDone,
		`if [ -s ` + path + ` ]; then`,
		`  echo "rpcload merge exited $code. Copy the merged result within ` + Duration(o.Keep) + `:"`,
		`  echo "  kubectl cp -c keep $POD_NAMESPACE/$POD_NAME:` + path + ` ` + pathBase(path) + `"`,
		`fi`,
		`exit $code`,
	}, "\n") + "\n"
}

// keepScript holds the pod for Keep once the merge has written its
// result, so that kubectl cp (which needs tar: busybox) can copy it.
func (o Options) keepScript() string {
	seconds := int64((o.Keep + 999_999_999) / 1e9)
	return strings.Join([]string{
		`until [ -e ` + mergeDone + ` ]; do sleep 1; done`,
		`if [ -s ` + o.ResultPath() + ` ]; then sleep ` + strconv.FormatInt(seconds, 10) + `; fi`,
	}, "\n") + "\n"
}

func pathBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// container is one of the run's containers under the restricted Pod
// Security Standard: no privilege escalation, no capabilities, a read-only
// root filesystem.
func (o Options) container(name string, command, args []string) container {
	c := container{Name: name, Image: o.Image, Command: command, Args: args, WorkingDir: scratchDir,
		SecurityContext: containerSecurityContext{AllowPrivilegeEscalation: false, ReadOnlyRootFilesystem: true, Capabilities: capabilities{Drop: []string{"ALL"}}}}
	for _, s := range o.EnvFromSecrets {
		c.EnvFrom = append(c.EnvFrom, envFromSource{SecretRef: secretRef{Name: s}})
	}
	return c
}

// podSpec is a pod of the run: never restarted (a rerun would be out of
// step), under the restricted Pod Security Standard (non-root, the runtime's
// seccomp profile), without the API's token or the Services' variables.
func (o Options) podSpec(containers []container, volumes ...volume) podSpec {
	return podSpec{RestartPolicy: "Never", AutomountServiceAccountToken: false, EnableServiceLinks: false,
		SecurityContext: podSecurityContext{RunAsNonRoot: true, RunAsUser: nonRoot, RunAsGroup: nonRoot, FSGroup: nonRoot,
			SeccompProfile: seccompProfile{Type: "RuntimeDefault"}},
		Containers: containers, Volumes: volumes}
}

func scratch() volume { return volume{Name: "scratch", EmptyDir: &emptyDir{SizeLimit: "256Mi"}} }

func fieldEnv(name, path string) envVar {
	return envVar{Name: name, ValueFrom: &envVarSource{FieldRef: fieldRef{FieldPath: path}}}
}

// shardMemoryRequest is 64Mi, twice the peak RSS docs/benchmarks.md
// measured at 100,000 requests in flight (33 MiB; 30 MiB at 1,000 and at
// 10,000), or the limit if that is lower.
func (o Options) shardMemoryRequest() string {
	if b, _ := quantityBytes(o.Memory); b < 64<<20 {
		return o.Memory
	}
	return "64Mi"
}

// mergeMemory is the merge pod's memory: 128Mi, and 4Mi for each shard's
// result. Measured: rpcload merge of one result of 3,000 intervals (50
// minutes at 1 s; 1.3 MB of JSON) peaks at 26 MiB of RSS, of four at 30.
func (o Options) mergeMemory() string { return strconv.Itoa(128+4*o.Shards) + "Mi" }
