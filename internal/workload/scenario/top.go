package scenario

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload/gen"
)

// The keys of each mapping of the format.
var (
	topKeys       = []string{"version", "target", "command", "transport", "profile", "headers", "seed", "feeders", "load", "mix"}
	transportKeys = []string{"conns", "framing", "http2", "insecure", "max_frame", "restart", "grace", "stderr"}
	profileKeys   = []string{"name", "mcp_era", "workspace", "open"}
	feederKeys    = []string{"file", "format", "mode"}
	profileNames  = []string{string(profile.JSONRPC), string(profile.MCP), string(profile.LSP), string(profile.Eth)}
)

// scenario reads the root mapping.
func (p *parser) scenario(root *yaml.Node) *Scenario {
	s := &Scenario{File: p.file, Lines: map[string]int{}}
	f := p.fields(root, "scenario", topKeys...)
	if f == nil {
		return s
	}
	if v, ok := f["version"]; !ok {
		p.errorf(root, "scenario: missing version (expected version: %d)", Version)
	} else if n, ok := p.integer(v.val, "version"); ok {
		if n != Version {
			p.errorf(v.val, "version: unsupported version %d (this rpcload reads version %d)", n, Version)
		} else {
			s.Version = Version
		}
	}
	if v, ok := f["target"]; ok {
		if t, ok := p.nonEmpty(v.val, "target"); ok {
			if _, err := transport.ParseTarget(t); err != nil {
				p.errorf(v.val, "target: %s", strings.TrimPrefix(err.Error(), "transport: "))
			} else {
				s.Target = t
			}
		}
	}
	if v, ok := f["command"]; ok {
		if _, both := f["target"]; both {
			p.errorf(v.key, "command: target and command exclude each other (a scenario runs against a URL or a child process)")
		}
		s.Command = p.command(v.val)
	}
	if v, ok := f["transport"]; ok {
		s.Transport = p.transport(v.val, s.Lines)
	}
	if v, ok := f["profile"]; ok {
		s.Profile = p.profile(v.val, s.Lines)
	}
	if v, ok := f["headers"]; ok {
		s.Headers = p.headers(v.val)
	}
	if v, ok := f["seed"]; ok {
		s.Lines["seed"] = v.key.Line
		if r, ok := p.scalar(v.val, "seed", "an integer from 0 to 2^64-1", "!!int"); ok {
			var u uint64
			if err := r.Decode(&u); err != nil {
				p.errorf(v.val, "seed: %s is out of range (expected an integer from 0 to 2^64-1)", r.Value)
			} else {
				s.Seed = &u
			}
		}
	}
	failed := map[string]bool{}
	if v, ok := f["feeders"]; ok {
		s.Feeders = p.feeders(v.val, failed)
	}
	if v, ok := f["load"]; ok {
		s.Load = p.load(v.val, s.Lines)
	}
	if v, ok := f["mix"]; ok {
		s.Mix = p.mix(v.val, s, failed)
	} else {
		p.errorf(root, "scenario: missing mix (expected a list of calls, each with a method)")
	}
	return s
}

// command reads a child's argv: a non-empty list of strings.
func (p *parser) command(n *yaml.Node) []string {
	items, ok := p.list(n, "command")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		p.errorf(n, "command: expected the program and its arguments, got an empty list")
		return nil
	}
	argv := make([]string, 0, len(items))
	for i, it := range items {
		r := resolve(it)
		if r == nil || r.Kind != yaml.ScalarNode || r.ShortTag() == "!!null" {
			p.errorf(it, "command[%d]: expected a string, got %s", i, kind(it))
			return nil
		}
		a := r.Value // 8080 is the argument "8080", as written
		if i == 0 && a == "" {
			p.errorf(it, "command[0]: the program must not be empty")
			return nil
		}
		if strings.IndexByte(a, 0) >= 0 {
			p.errorf(it, "command[%d]: contains a NUL byte", i)
			return nil
		}
		argv = append(argv, a)
	}
	return argv
}

// transport reads the transport mapping.
func (p *parser) transport(n *yaml.Node, lines map[string]int) Transport {
	var t Transport
	f := p.fields(n, "transport", transportKeys...)
	for k, v := range f {
		lines["transport."+k] = v.key.Line
	}
	if v, ok := f["conns"]; ok {
		t.Conns, _ = p.intIn(v.val, "transport.conns", 1, 1<<20)
	}
	if v, ok := f["framing"]; ok {
		t.Framing, _ = p.oneOf(v.val, "transport.framing", "newline", "content-length")
	}
	if v, ok := f["http2"]; ok {
		t.HTTP2, _ = p.boolean(v.val, "transport.http2")
	}
	if v, ok := f["insecure"]; ok {
		t.Insecure, _ = p.boolean(v.val, "transport.insecure")
	}
	if v, ok := f["restart"]; ok {
		t.Restart, _ = p.boolean(v.val, "transport.restart")
	}
	if v, ok := f["max_frame"]; ok {
		if t.MaxFrame, ok = p.size(v.val, "transport.max_frame"); ok && t.MaxFrame < 64 {
			p.errorf(v.val, "transport.max_frame: %d bytes is too small (64 at least)", t.MaxFrame)
			t.MaxFrame = 0
		}
	}
	if v, ok := f["grace"]; ok {
		t.Grace, _ = p.duration(v.val, "transport.grace", true)
	}
	if v, ok := f["stderr"]; ok {
		if s, ok := p.nonEmpty(v.val, "transport.stderr"); ok {
			t.Stderr = p.abs(s)
		}
	}
	return t
}

// abs makes path absolute, relative to the scenario file's directory.
func (p *parser) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(p.dir, path)
}

// profile reads the profile: a name, or a mapping with a name.
func (p *parser) profile(n *yaml.Node, lines map[string]int) Profile {
	var pr Profile
	if r := resolve(n); r != nil && r.Kind == yaml.ScalarNode {
		pr.Name, _ = p.oneOf(n, "profile", profileNames...)
		lines["profile.name"] = n.Line
		return pr
	}
	r := resolve(n)
	if r == nil || r.Kind != yaml.MappingNode {
		p.errorf(n, "profile: expected a profile name (%s) or a mapping with name, got %s", strings.Join(profileNames, ", "), kind(n))
		return pr
	}
	f := p.fields(n, "profile", profileKeys...)
	for k, v := range f {
		lines["profile."+k] = v.key.Line
	}
	v, ok := f["name"]
	if !ok {
		p.errorf(n, "profile: missing name (expected one of %s)", strings.Join(profileNames, ", "))
	} else {
		pr.Name, _ = p.oneOf(v.val, "profile.name", profileNames...)
	}
	needs := func(key, want string) bool {
		if pr.Name != "" && pr.Name != want {
			p.errorf(f[key].key, "profile.%s: applies to the %s profile only (this one is %s)", key, want, pr.Name)
			return false
		}
		return true
	}
	if v, ok := f["mcp_era"]; ok && needs("mcp_era", "mcp") {
		if era, ok := p.str(v.val, "profile.mcp_era"); ok {
			if _, err := profile.ParseEra(era); err != nil {
				p.errorf(v.val, "profile.mcp_era: %s", strings.TrimPrefix(err.Error(), "profile: "))
			} else {
				pr.MCPEra = era
			}
		}
	}
	if v, ok := f["workspace"]; ok && needs("workspace", "lsp") {
		if s, ok := p.nonEmpty(v.val, "profile.workspace"); ok {
			abs := p.abs(s)
			if st, err := os.Stat(abs); err != nil || !st.IsDir() {
				p.errorf(v.val, "profile.workspace: %s is not a directory", abs)
			} else {
				pr.Workspace = abs
			}
		}
	}
	if v, ok := f["open"]; ok && needs("open", "lsp") {
		if s, ok := p.nonEmpty(v.val, "profile.open"); ok {
			abs := p.abs(s)
			if st, err := os.Stat(abs); err != nil || !st.Mode().IsRegular() {
				p.errorf(v.val, "profile.open: %s is not a readable file", abs)
			} else {
				pr.Open = abs
			}
		}
	}
	return pr
}

// headerName is an HTTP field name (RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// headers reads the headers mapping, expanding ${VAR} in the values. The
// values are secrets: no message quotes them.
func (p *parser) headers(n *yaml.Node) map[string]string {
	r := resolve(n)
	if r == nil || r.Kind != yaml.MappingNode {
		p.errorf(n, "headers: expected a mapping of header names to values, got %s", kind(n))
		return nil
	}
	out := map[string]string{}
	seen := map[string]int{} // canonical name → line
	for i := 0; i+1 < len(r.Content); i += 2 {
		k, v := r.Content[i], r.Content[i+1]
		name, ok := p.key(k, "headers")
		if !ok {
			continue
		}
		where := "headers." + name
		if !headerName.MatchString(name) {
			p.errorf(k, "headers: %q is not a valid header name", name)
			continue
		}
		low := strings.ToLower(name)
		if line, dup := seen[low]; dup {
			p.errorf(k, "headers: %s is given twice (first at line %d; names are case-insensitive)", name, line)
			continue
		}
		seen[low] = k.Line
		val, ok := p.scalar(v, where, "a string (quote it)", "!!str")
		if !ok {
			continue
		}
		x, err := expand(val.Value, p.lookupSecret)
		if err != nil {
			p.errorf(v, "%s: %v", where, err)
			continue
		}
		if badHeaderValue(x) {
			p.errorf(v, "%s: the value (after expanding variables) holds a control character such as a newline", where)
			continue
		}
		out[name] = x
	}
	return out
}

// lookupSecret is getenv, keeping each value found as a secret.
func (p *parser) lookupSecret(name string) (string, bool) {
	v, ok := p.getenv(name)
	if ok && v != "" {
		p.secrets = append(p.secrets, v)
	}
	return v, ok
}

// badHeaderValue reports control characters other than tab.
func badHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// feederName is the name of a feeder: $feed refers to name.column.
var feederName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// feeders reads and loads the feeders; the names of those that failed go
// into failed, so calls using them are not reported again.
func (p *parser) feeders(n *yaml.Node, failed map[string]bool) map[string]*gen.Feeder {
	r := resolve(n)
	if r == nil || r.Kind != yaml.MappingNode {
		p.errorf(n, "feeders: expected a mapping of feeder names to {file, mode, format}, got %s", kind(n))
		return nil
	}
	out := map[string]*gen.Feeder{}
	seen := map[string]int{}
	for i := 0; i+1 < len(r.Content); i += 2 {
		k, v := r.Content[i], r.Content[i+1]
		name, ok := p.key(k, "feeders")
		if !ok {
			continue
		}
		if line, dup := seen[name]; dup {
			p.errorf(k, "feeders: %s is defined twice (first at line %d)", name, line)
			continue
		}
		seen[name] = k.Line
		failed[name] = true
		if !feederName.MatchString(name) {
			p.errorf(k, "feeders: %q is not a valid feeder name (letters, digits, _ and -, not starting with a digit)", name)
			continue
		}
		where := "feeders." + name
		f := p.fields(v, where, feederKeys...)
		if f == nil {
			continue
		}
		var path, format, mode string
		file, ok := f["file"]
		if !ok {
			p.errorf(v, "%s: missing file (the CSV or JSONL file to read)", where)
			continue
		}
		if path, ok = p.nonEmpty(file.val, where+".file"); !ok {
			continue
		}
		if fv, ok := f["format"]; ok {
			if format, ok = p.oneOf(fv.val, where+".format", "csv", "jsonl"); !ok {
				continue
			}
		}
		mode = "sequential"
		if mv, ok := f["mode"]; ok {
			if mode, ok = p.oneOf(mv.val, where+".mode", "sequential", "random", "once"); !ok {
				continue
			}
		}
		fd, err := gen.LoadFeeder(p.abs(path), format, mode)
		if err != nil {
			p.errorf(file.val, "%s: %v", where, err)
			continue
		}
		out[name] = fd
		delete(failed, name)
	}
	return out
}
