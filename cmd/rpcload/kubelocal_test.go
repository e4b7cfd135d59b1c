package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/kube"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// The manifests' command lines, run on one machine: every shard pod's
// container as a process of the real binary with its index in
// JOB_COMPLETION_INDEX, the merge pod's two containers through /bin/sh as
// rendered, what Kubernetes would give them put in by hand (the pods'
// addresses become free loopback ports, their DNS names those ports, the
// volumes temporary directories).

// kubePod is what the test reads of a container in the manifests.
type kubePod struct {
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Name    string
					Command []string
					Args    []string
				}
			}
		}
	}
}

// localRun is one rendering run by hand.
type localRun struct {
	shards []*exec.Cmd
	errs   []*bytes.Buffer
	merge  *exec.Cmd
	keep   *exec.Cmd
	out    *lockedBuffer // the merge's stdout and stderr, as kubectl logs shows them
	result string        // where the merged result goes
}

// startLocal renders o and starts its shards, its merge and its keep.
func startLocal(t *testing.T, o kube.Options) *localRun {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("the merge pod's containers need /bin/sh")
	}
	var b bytes.Buffer
	if err := kube.Render(&b, o); err != nil {
		t.Fatal(err)
	}
	containers := map[string][]string{}
	dec := yaml.NewDecoder(&b)
	for {
		var p kubePod
		if err := dec.Decode(&p); err != nil {
			break
		}
		for _, c := range p.Spec.Template.Spec.Containers {
			containers[c.Name] = append(append([]string(nil), c.Command...), c.Args...)
		}
	}
	bin := binary(t)
	dir := t.TempDir()
	results, scratch := filepath.Join(dir, "results"), filepath.Join(dir, "tmp")
	for _, d := range []string{results, scratch} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	r := &localRun{out: &lockedBuffer{}, result: filepath.Join(results, "total.json")}
	var urls []string
	for i := range o.Shards {
		// The pod's IP, bracketed as the manifests give it.
		addr, metrics := clitest.FreeAddr(t), clitest.FreeAddr(t)
		args := strings.Join(containers["rpcload"][1:], "\x00")
		args = strings.ReplaceAll(args, fmt.Sprintf("[$(POD_IP)]:%d", o.ResultPort), strings.Replace(addr, "127.0.0.1", "[127.0.0.1]", 1))
		args = strings.ReplaceAll(args, fmt.Sprintf("[$(POD_IP)]:%d", o.MetricsPort), strings.Replace(metrics, "127.0.0.1", "[127.0.0.1]", 1))
		cmd := exec.CommandContext(ctx, bin, strings.Split(args, "\x00")...)
		cmd.Env = append(os.Environ(), kube.IndexEnv+"="+strconv.Itoa(i))
		var errs bytes.Buffer
		cmd.Stderr, cmd.WaitDelay = &errs, time.Second
		r.shards, r.errs = append(r.shards, cmd), append(r.errs, &errs)
		urls = append(urls, "http://"+addr)
	}
	local := func(argv []string) []string {
		s := strings.Join(argv, "\x00")
		for i, u := range urls {
			s = strings.ReplaceAll(s, o.ShardURL(i), u)
		}
		s = strings.ReplaceAll(strings.ReplaceAll(s, "/tmp/merge-done", scratch+"/merge-done"), "/results/", results+"/")
		return strings.Split(s, "\x00")
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"POD_NAME=rpcload-merge-x7k2p", "POD_NAMESPACE=load")
	merge, keep := local(containers["merge"]), local(containers["keep"])
	r.merge, r.keep = exec.CommandContext(ctx, merge[0], merge[1:]...), exec.CommandContext(ctx, keep[0], keep[1:]...)
	r.merge.Env, r.keep.Env = env, env
	r.merge.Stdout, r.merge.Stderr = r.out, r.out
	for _, c := range append(append([]*exec.Cmd(nil), r.shards...), r.merge, r.keep) {
		if err := c.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		cancel() // kills, by their PIDs, whatever is still running
		for _, c := range append(append([]*exec.Cmd(nil), r.shards...), r.merge, r.keep) {
			_ = c.Wait()
		}
	})
	return r
}

// waitExit waits at most limit for c and returns its exit code, -1 if killed.
func waitExit(t *testing.T, c *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
		return c.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("%q did not exit within %s", c.Args, limit)
		return 0
	}
}

func localOptions(target string) kube.Options {
	return kube.Options{Name: "rpcload", Image: "i:1", Shards: 3, StartAt: time.Now().Add(2 * time.Second),
		Run:        []string{"run", target, "--method", "echo", "--params", "[1]", "--rate", "300", "--requests", "300", "-q"},
		ResultPort: 8080, MetricsPort: 9464, ResultTimeout: time.Minute, MetricsLinger: 0, CPU: "1", Memory: "256Mi",
		MergeWait: time.Minute, Keep: time.Second, Command: "rpcload kubernetes ..."}
}

// TestKubernetesLocal: the shards run as rendered and the merge merges
// their 300 requests; its log ends with the kubectl cp command; the keep
// container holds on for --keep after the merge, then ends.
func TestKubernetesLocal(t *testing.T) {
	_, target, _ := startServer(t, testsrv.Config{})
	r := startLocal(t, localOptions(target))
	if code := waitExit(t, r.merge, time.Minute); code != exitOK {
		t.Fatalf("the merge exited %d:\n%s", code, r.out)
	}
	merged := time.Now()
	mustContain(t, "the merge's log", r.out.String(), "merged 3 results", "requests    sent 300",
		"rpcload merge exited 0. Copy the merged result within 1s:", "kubectl cp -c keep load/rpcload-merge-x7k2p:"+r.result+" total.json")
	if res := readResult(t, r.result); res.Requests.Sent != 300 || res.Requests.OK != 300 {
		t.Errorf("the merged result: %+v", res.Requests)
	}
	for i, s := range r.shards {
		if code := waitExit(t, s, 30*time.Second); code != exitOK {
			t.Errorf("shard pod %d exited %d:\n%s", i, code, r.errs[i])
		}
	}
	if code := waitExit(t, r.keep, 30*time.Second); code != exitOK || time.Since(merged) < 900*time.Millisecond {
		t.Errorf("the keep container exited %d %s after the merge; want 0 after --keep (1s)", code, time.Since(merged))
	}
}

// TestKubernetesLocalShardKilled: a shard pod killed during the run fails
// the merge within seconds, naming the shard; with no result to keep,
// the keep container ends at once.
func TestKubernetesLocalShardKilled(t *testing.T) {
	_, target, _ := startServer(t, testsrv.Config{})
	o := localOptions(target)
	o.Run = []string{"run", target, "--method", "echo", "--rate", "100", "--duration", "1m", "-q"}
	r := startLocal(t, o)
	// The merge's log says when it has seen shard 2 (pod 1) running.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(r.out.String(), "shard 2/3") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := r.shards[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	code := waitExit(t, r.merge, 30*time.Second)
	if took := time.Since(killed); code == exitOK || took > 5*time.Second {
		t.Errorf("the merge exited %d %s after shard pod 1 was killed; want a failure within 5s", code, took)
	}
	mustContain(t, "the merge's log", r.out.String(), "shard 2/3")
	if code := waitExit(t, r.keep, 5*time.Second); code != exitOK {
		t.Errorf("the keep container exited %d", code)
	}
}
