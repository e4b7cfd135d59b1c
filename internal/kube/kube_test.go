package kube

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func options() Options {
	return Options{Name: "rpcload", Image: "r.example.com/rpcload:1", Shards: 3, StartAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		Run:        []string{"run", "http://rpc:8545/", "--method", "m"},
		ResultPort: 8080, MetricsPort: 9464, ResultTimeout: 10 * time.Minute, MetricsLinger: time.Minute, CPU: "1", Memory: "256Mi",
		MergeWait: 15 * time.Minute, Keep: 10 * time.Minute, Command: "rpcload kubernetes ..."}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Minute: "10m", time.Hour: "1h", 90 * time.Second: "1m30s", 2*time.Hour + 3*time.Minute: "2h3m",
		1500 * time.Millisecond: "1.5s", 0: "0s", time.Hour + time.Second: "1h0m1s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(Duration(d)); err != nil || back != d {
			t.Errorf("Duration(%v) = %q does not parse back (%v, %v)", d, Duration(d), back, err)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
		want   string // in the error; "" for none
	}{
		{"valid", func(*Options) {}, ""},
		{"one shard", func(o *Options) { o.Shards = 1 }, ""},
		{"upper-case name", func(o *Options) { o.Name = "Rpcload" }, `--name "Rpcload"`},
		{"name ending in -", func(o *Options) { o.Name = "load-" }, `--name "load-"`},
		{"name too long for the merge Job", func(o *Options) { o.Name = strings.Repeat("a", 58) }, "too long"},
		{"name too long for the hostnames", func(o *Options) { o.Name, o.Shards = strings.Repeat("a", 55), 100_000_000 }, "too long"},
		{"name at the limit", func(o *Options) { o.Name, o.Shards = strings.Repeat("a", 57), 10 }, ""},
		{"bad namespace", func(o *Options) { o.Namespace = "a.b" }, `--namespace "a.b"`},
		{"no image", func(o *Options) { o.Image = "" }, "--image"},
		{"no shards", func(o *Options) { o.Shards = 0 }, "--shards"},
		{"no start", func(o *Options) { o.StartAt = time.Time{} }, "no start time"},
		{"not run", func(o *Options) { o.Run = []string{"merge"} }, "must be rpcload's run"},
		{"port 0", func(o *Options) { o.ResultPort = 0 }, "must be ports"},
		{"same ports", func(o *Options) { o.MetricsPort = 8080 }, "both 8080"},
		{"no merge wait", func(o *Options) { o.MergeWait = 0 }, "--merge-wait"},
		{"negative keep", func(o *Options) { o.Keep = -time.Second }, "--keep"},
		{"bad cpu", func(o *Options) { o.CPU = "1 core" }, "--cpu"},
		{"bad memory", func(o *Options) { o.Memory = "lots" }, "--memory"},
		{"tiny memory", func(o *Options) { o.Memory = "15Mi" }, "below 16Mi"},
		{"memory in M", func(o *Options) { o.Memory = "200M" }, ""},
		{"bad claim", func(o *Options) { o.VolumeClaim = "Results" }, "--volume-claim"},
		{"bad secret", func(o *Options) { o.EnvFromSecrets = []string{"ok", "not ok"} }, `--env-from-secret "not ok"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options()
			tt.change(&o)
			err := o.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
			var b bytes.Buffer
			if rerr := Render(&b, o); (rerr == nil) != (err == nil) || (err != nil && b.Len() > 0) {
				t.Errorf("Render: %v, %d bytes, but Validate: %v", rerr, b.Len(), err)
			}
		})
	}
}

// TestCommandLines: the shards' args are the run's with the shard's own
// flags after them (--allow-violations once); the merge's name every
// shard's URL in index order, then the options.
func TestCommandLines(t *testing.T) {
	o := options()
	args := o.ShardArgs()
	if !slices.Equal(args[:len(o.Run)], o.Run) {
		t.Errorf("the shards' args %q do not start with the run %q", args, o.Run)
	}
	want := "--shard-count 3 --shard-index-env JOB_COMPLETION_INDEX --start-at 2030-01-01T00:00:00Z --serve-result [$(POD_IP)]:8080 --serve-result-any-host --serve-result-timeout 10m --metrics-addr [$(POD_IP)]:9464 --metrics-any-host --metrics-linger 1m --allow-violations"
	if got := strings.Join(args[len(o.Run):], " "); got != want {
		t.Errorf("the shards' flags\n got %s\nwant %s", got, want)
	}
	o.Run = append(o.Run, "--allow-violations")
	if n := strings.Count(strings.Join(o.ShardArgs(), " "), "--allow-violations"); n != 1 {
		t.Errorf("--allow-violations %d times when the run gives it", n)
	}
	o.AllowMissing, o.Upload, o.VolumeClaim, o.Name = true, "$(UPLOAD_URL)", "results", "eth"
	want = "merge --from http://eth-0.eth:8080 --from http://eth-1.eth:8080 --from http://eth-2.eth:8080 --wait 15m --allow-missing --upload $(UPLOAD_URL) -o /results/eth-20300101T000000Z.json"
	if got := strings.Join(o.MergeArgs(), " "); got != want {
		t.Errorf("the merge's args\n got %s\nwant %s", got, want)
	}
}

// TestRenderComments: every note lands on its field, and the documents
// come in apply order.
func TestRenderComments(t *testing.T) {
	o := options()
	o.PodMonitor = true
	var b bytes.Buffer
	if err := Render(&b, o); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	kinds := []string{"kind: Service", "kind: PodMonitor", "kind: Job\nmetadata:\n  name: rpcload\n", "kind: Job\nmetadata:\n  name: rpcload-merge\n"}
	last := -1
	for _, k := range kinds {
		i := strings.Index(out, k)
		if i <= last {
			t.Errorf("%q is not after the documents before it", k)
		}
		last = i
	}
	for _, want := range []string{
		"# A failed shard is not run again", "backoffLimitPerIndex: 0",
		"# The restricted Pod Security Standard", "The PodMonitor needs the Prometheus Operator",
		"Generated by:\n#   rpcload kubernetes ...", "sleep 600", "kubectl cp -c keep $POD_NAMESPACE/$POD_NAME:/results/total.json total.json",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the manifests lack %q", want)
		}
	}
}
