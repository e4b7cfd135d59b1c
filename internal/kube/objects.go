package kube

// The Kubernetes objects the manifests hold, as the few fields of the API
// types (k8s.io/api core/v1, batch/v1; monitoring.coreos.com/v1 for the
// PodMonitor) that they set, with the API's field names. The kubecheck
// module decodes every rendered document strictly into the real types, so
// a misspelt field here fails a test rather than a kubectl apply.

type meta struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type service struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   meta        `yaml:"metadata"`
	Spec       serviceSpec `yaml:"spec"`
}

type serviceSpec struct {
	ClusterIP                string            `yaml:"clusterIP"`
	PublishNotReadyAddresses bool              `yaml:"publishNotReadyAddresses"`
	Selector                 map[string]string `yaml:"selector"`
	Ports                    []servicePort     `yaml:"ports"`
}

type servicePort struct {
	Name       string `yaml:"name"`
	Port       int    `yaml:"port"`
	TargetPort string `yaml:"targetPort"`
}

type job struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   meta    `yaml:"metadata"`
	Spec       jobSpec `yaml:"spec"`
}

type jobSpec struct {
	CompletionMode       string      `yaml:"completionMode,omitempty"`
	Completions          *int        `yaml:"completions,omitempty"`
	Parallelism          *int        `yaml:"parallelism,omitempty"`
	BackoffLimit         *int        `yaml:"backoffLimit,omitempty"`
	BackoffLimitPerIndex *int        `yaml:"backoffLimitPerIndex,omitempty"`
	MaxFailedIndexes     *int        `yaml:"maxFailedIndexes,omitempty"`
	Template             podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata templateMeta `yaml:"metadata"`
	Spec     podSpec      `yaml:"spec"`
}

type templateMeta struct {
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type podSpec struct {
	RestartPolicy                string             `yaml:"restartPolicy"`
	Subdomain                    string             `yaml:"subdomain,omitempty"`
	AutomountServiceAccountToken bool               `yaml:"automountServiceAccountToken"`
	EnableServiceLinks           bool               `yaml:"enableServiceLinks"`
	SecurityContext              podSecurityContext `yaml:"securityContext"`
	TopologySpreadConstraints    []topologySpread   `yaml:"topologySpreadConstraints,omitempty"`
	Containers                   []container        `yaml:"containers"`
	Volumes                      []volume           `yaml:"volumes"`
}

type podSecurityContext struct {
	RunAsNonRoot   bool           `yaml:"runAsNonRoot"`
	RunAsUser      int64          `yaml:"runAsUser"`
	RunAsGroup     int64          `yaml:"runAsGroup"`
	FSGroup        int64          `yaml:"fsGroup"`
	SeccompProfile seccompProfile `yaml:"seccompProfile"`
}

type seccompProfile struct {
	Type string `yaml:"type"`
}

type topologySpread struct {
	MaxSkew           int           `yaml:"maxSkew"`
	TopologyKey       string        `yaml:"topologyKey"`
	WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
	LabelSelector     labelSelector `yaml:"labelSelector"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type container struct {
	Name            string                   `yaml:"name"`
	Image           string                   `yaml:"image"`
	Command         []string                 `yaml:"command"`
	Args            []string                 `yaml:"args,omitempty"`
	WorkingDir      string                   `yaml:"workingDir"`
	Env             []envVar                 `yaml:"env,omitempty"`
	EnvFrom         []envFromSource          `yaml:"envFrom,omitempty"`
	Ports           []containerPort          `yaml:"ports,omitempty"`
	Resources       resources                `yaml:"resources"`
	SecurityContext containerSecurityContext `yaml:"securityContext"`
	VolumeMounts    []volumeMount            `yaml:"volumeMounts"`
}

type envVar struct {
	Name      string        `yaml:"name"`
	ValueFrom *envVarSource `yaml:"valueFrom,omitempty"`
}

type envVarSource struct {
	FieldRef fieldRef `yaml:"fieldRef"`
}

type fieldRef struct {
	FieldPath string `yaml:"fieldPath"`
}

type envFromSource struct {
	SecretRef secretRef `yaml:"secretRef"`
}

type secretRef struct {
	Name string `yaml:"name"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type resources struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits"`
}

type containerSecurityContext struct {
	AllowPrivilegeEscalation bool         `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool         `yaml:"readOnlyRootFilesystem"`
	Capabilities             capabilities `yaml:"capabilities"`
}

type capabilities struct {
	Drop []string `yaml:"drop"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}

type volume struct {
	Name                  string                 `yaml:"name"`
	EmptyDir              *emptyDir              `yaml:"emptyDir,omitempty"`
	PersistentVolumeClaim *persistentVolumeClaim `yaml:"persistentVolumeClaim,omitempty"`
}

type emptyDir struct {
	SizeLimit string `yaml:"sizeLimit"`
}

type persistentVolumeClaim struct {
	ClaimName string `yaml:"claimName"`
}

type podMonitor struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   meta           `yaml:"metadata"`
	Spec       podMonitorSpec `yaml:"spec"`
}

type podMonitorSpec struct {
	Selector            labelSelector        `yaml:"selector"`
	PodMetricsEndpoints []podMetricsEndpoint `yaml:"podMetricsEndpoints"`
}

type podMetricsEndpoint struct {
	Port string `yaml:"port"`
	Path string `yaml:"path"`
}
