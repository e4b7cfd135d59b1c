package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestOutputPaths: -o - puts the result, and nothing else, on stdout (the
// report goes to stderr), for run and merge; -o onto a symlink writes its
// target and leaves the link a link (as root, -o /dev/stdout replaced the
// /dev/stdout symlink with a regular file).
func TestOutputPaths(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	load := []string{"run", tcpURL, "--method", "echo", "--params", "[1]", "--rate", "100", "--duration", "100ms", "-q"}
	writePart(t, at("s1.json"), 10, 0, &stats.ShardInfo{Index: 1, Count: 2})
	writePart(t, at("s2.json"), 20, 0, &stats.ShardInfo{Index: 2, Count: 2})
	if err := os.WriteFile(at("run-1.json"), []byte("an older run's result, longer than nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run-1.json", at("latest.json")); err != nil {
		t.Fatal(err)
	}

	decode := func(t *testing.T, what string, data []byte) *stats.Result {
		t.Helper()
		var r stats.Result
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || dec.More() || r.Schema != stats.Schema {
			t.Fatalf("%s is not one result and nothing else (%v, schema %q):\n%.500s", what, err, r.Schema, data)
		}
		return &r
	}

	t.Run("run -o -", func(t *testing.T) {
		c := runBinary(t, childLimit, append(load, "-o", "-")...)
		if c.code != exitOK {
			t.Fatalf("want exit 0; %v", c)
		}
		if r := decode(t, "stdout", []byte(c.stdout)); r.Requests.Sent != 10 {
			t.Errorf("sent %d, want 10", r.Requests.Sent)
		}
		mustContain(t, "stderr", c.stderr, "target      "+tcpURL, "requests    sent 10")
		if _, err := os.Stat("-"); err == nil {
			t.Errorf("a file named - was written")
		}
	})
	t.Run("run -o symlink", func(t *testing.T) {
		c := runBinary(t, childLimit, append(load, "-o", at("latest.json"))...)
		if c.code != exitOK {
			t.Fatalf("want exit 0; %v", c)
		}
		if target, err := os.Readlink(at("latest.json")); err != nil || target != "run-1.json" {
			t.Errorf("latest.json: readlink %q, %v; want the symlink to run-1.json kept", target, err)
		}
		data, err := os.ReadFile(at("run-1.json"))
		if err != nil {
			t.Fatal(err)
		}
		decode(t, "run-1.json", data)
		mustContain(t, "stdout", c.stdout, "requests    sent 10")
	})
	t.Run("merge -o -", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code, err := mergeCmd(context.Background(), []string{at("s1.json"), at("s2.json"), "-o", "-"}, &stdout, &stderr)
		if code != exitOK || err != nil {
			t.Fatalf("exit %d, %v\n%s", code, err, &stderr)
		}
		if r := decode(t, "stdout", stdout.Bytes()); r.Requests.Sent != 30 {
			t.Errorf("sent %d, want 30", r.Requests.Sent)
		}
		mustContain(t, "stderr", stderr.String(), "merged 2 results into stdout", "requests    sent 30")
	})
	t.Run("scenario from-openrpc -o -", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code, err := scenarioCmd(context.Background(), []string{"from-openrpc", "../../internal/testsrv/openrpc.json", "-o", "-"}, &stdout, &stderr)
		if code != exitOK || err != nil {
			t.Fatalf("exit %d, %v\n%s", code, err, &stderr)
		}
		mustContain(t, "stdout", stdout.String(), "version: 1", "mix:")
	})
}
