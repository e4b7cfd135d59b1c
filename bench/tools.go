package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// rpcResult is rpcload's result file (-o).
type rpcResult = stats.Result

// tool is an external load tester.
type tool struct {
	Name    string
	Path    string // "" when unavailable
	Version string
	Note    string // how it was installed, or why it is missing
}

// Pinned versions of the Go tools, installed into bench/.tools so nothing
// outside the repository changes.
var goTools = []struct{ name, pkg, version string }{
	{"vegeta", "github.com/tsenart/vegeta/v12", "v12.13.0"},
	{"hey", "github.com/rakyll/hey", "v0.1.5"},
}

// findTools finds or installs wrk (Debian's package), vegeta and hey (Go
// module proxy). A tool that cannot be had is skipped with a note.
func (s *suite) findTools(ctx context.Context) {
	w := &tool{Name: "wrk"}
	s.tools["wrk"] = w
	if p, err := exec.LookPath("wrk"); err == nil {
		w.Path, w.Note = p, "found on PATH"
	} else if s.opt.noInstall {
		w.Note = "not installed (--no-install)"
	} else if err := s.aptInstall(ctx, "wrk"); err != nil {
		w.Note = "could not be installed: " + err.Error()
	} else if p, err := exec.LookPath("wrk"); err == nil {
		w.Path, w.Note = p, "installed with apt-get"
	}
	if w.Path != "" {
		out, _ := exec.CommandContext(ctx, w.Path, "--version").CombinedOutput() // exits 1 after printing
		first, _, _ := strings.Cut(string(out), "\n")
		w.Version = strings.TrimSpace(strings.Split(first, "Copyright")[0])
	}
	bin := filepath.Join(s.root, "bench", ".tools")
	for _, gt := range goTools {
		t := &tool{Name: gt.name}
		s.tools[gt.name] = t
		p := filepath.Join(bin, gt.name)
		have := goModVersion(ctx, p)
		switch {
		case have == gt.version:
			t.Note = "found in bench/.tools"
		case s.opt.noInstall:
			t.Note = "not installed (--no-install)"
			continue
		default:
			s.logf("installing %s@%s into bench/.tools", gt.pkg, gt.version)
			_, err := s.run(ctx, cmdSpec{
				Argv: []string{"go", "install", gt.pkg + "@" + gt.version},
				Env:  []string{"GOBIN=" + bin, "GOFLAGS="}, Dir: os.TempDir(), CPU: -1, Timeout: 5 * time.Minute,
			})
			if err != nil {
				t.Note = "could not be installed: " + firstLine(err.Error())
				continue
			}
			t.Note = "installed with go install into bench/.tools"
		}
		t.Path, t.Version = p, gt.pkg+" "+goModVersion(ctx, p)
	}
	for _, name := range []string{"wrk", "vegeta", "hey"} {
		t := s.tools[name]
		if t.Path == "" {
			s.notes = append(s.notes, fmt.Sprintf("%s was skipped: %s.", name, t.Note))
		}
	}
}

// aptInstall installs a Debian package as root; a failed install is tried
// again after apt-get update (a fresh machine has no package lists).
func (s *suite) aptInstall(ctx context.Context, pkg string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("not root, so apt-get cannot install %s; install it and run again", pkg)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("no apt-get to install %s with", pkg)
	}
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	install := cmdSpec{Argv: []string{"apt-get", "install", "-y", "-q", pkg}, Env: env, CPU: -1, Timeout: 5 * time.Minute}
	if _, err := s.run(ctx, install); err == nil {
		return nil
	}
	if _, err := s.run(ctx, cmdSpec{Argv: []string{"apt-get", "update", "-q"}, Env: env, CPU: -1, Timeout: 5 * time.Minute}); err != nil {
		return err
	}
	_, err := s.run(ctx, install)
	return err
}

// goModVersion reads the main module's version stamped in a Go binary, or
// "" when the file is missing or not a Go binary.
func goModVersion(ctx context.Context, path string) string {
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	out, err := exec.CommandContext(ctx, "go", "version", "-m", path).Output()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "mod" {
			return f[2]
		}
	}
	return ""
}

// buildSetting reads one -buildvcs setting (vcs.revision, ...) of a binary.
func buildSetting(ctx context.Context, path, key string) string {
	out, err := exec.CommandContext(ctx, "go", "version", "-m", path).Output()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "build\t"+key+"="); ok {
			return v
		}
	}
	return ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// machineInfo describes where the numbers were taken.
type machineInfo struct {
	cpuModel  string
	cpus      int
	memory    string
	kernel    string
	os        string
	goVersion string
	loadStart string
	loadEnd   string
}

func readMachine() machineInfo {
	m := machineInfo{cpus: runtime.NumCPU(), goVersion: runtime.Version(), loadStart: readLoadAvg()}
	m.cpuModel = procField("/proc/cpuinfo", "model name", ":")
	if kb := procField("/proc/meminfo", "MemTotal", ":"); kb != "" {
		var n int64
		fmt.Sscanf(kb, "%d", &n)
		m.memory = fmt.Sprintf("%.1f GiB", float64(n)/(1<<20))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = "Linux " + strings.TrimSpace(string(b))
	}
	m.os = strings.Trim(procField("/etc/os-release", "PRETTY_NAME", "="), `"`)
	return m
}

// procField returns the value of the first "key<sep>value" line of a file.
func procField(path, key, sep string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), sep)
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// readLoadAvg returns the 1, 5 and 15 minute load averages.
func readLoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
