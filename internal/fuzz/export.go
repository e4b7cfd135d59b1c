package fuzz

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/native"
	"github.com/rpcload/rpcload/internal/stats"
)

// Exported is one finding written as a Go fuzz corpus file.
type Exported struct {
	ID     string
	File   string
	GoTest string // the command that runs it as a regression test
}

// FindingDirs returns dir itself when it is a finding directory, else its
// subdirectories that are (a run's output directory), sorted.
func FindingDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "finding.json")); err == nil {
		return []string{dir}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(sub, "finding.json")); err == nil {
			out = append(out, sub)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no findings (no finding.json in it or its subdirectories)", dir)
	}
	sort.Strings(out)
	return out, nil
}

// ExportGo writes each finding under findingsDir (a run's output directory
// or one finding) into outDir, a native fuzz target's corpus directory
// (PKG/testdata/fuzz/FuzzXxx), in Go's corpus file format, named by the
// finding's id. The input is the literal form of package fuzzcase, which
// the rpcfuzz harness replays as is. Each finding.json gets the go test
// line that runs it.
func ExportGo(findingsDir, outDir string) ([]Exported, error) {
	target := filepath.Base(filepath.Clean(outDir))
	if !strings.HasPrefix(target, "Fuzz") {
		return nil, fmt.Errorf("export-go: %s must be a fuzz target's corpus directory, PKG/testdata/fuzz/FuzzXxx (its name starts with Fuzz)", outDir)
	}
	dirs, err := FindingDirs(findingsDir)
	if err != nil {
		return nil, fmt.Errorf("export-go: --findings %w", err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("export-go: %w", err)
	}
	pkgDir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Clean(outDir))))
	var out []Exported
	for _, dir := range dirs {
		f, c, err := ReadFinding(dir)
		if err != nil {
			return out, fmt.Errorf("export-go: %w", err)
		}
		file := filepath.Join(outDir, f.ID)
		if err := stats.WriteFileAtomic(file, fuzzcase.MarshalGoCorpus(fuzzcase.Encode(c))); err != nil {
			return out, fmt.Errorf("export-go: %w", err)
		}
		line := "(cd " + ShellQuote(pkgDir) + " && go test -run '^" + target + "$/^" + f.ID + "$' .)"
		f.GoTest = line
		f.Reproduce = slices.DeleteFunc(f.Reproduce, func(r string) bool { return strings.Contains(r, " go test -run ") })
		f.Reproduce = append(f.Reproduce, line)
		if err := writeFindingJSON(dir, f); err != nil {
			return out, fmt.Errorf("export-go: %w", err)
		}
		out = append(out, Exported{ID: f.ID, File: file, GoTest: line})
	}
	return out, nil
}

// Imported is one Go corpus file turned into a finding directory, or the
// reason it was skipped.
type Imported struct {
	File    string
	Dir     string
	Skipped string
}

// ImportGo turns each file of a Go fuzz corpus directory into a finding
// directory under outDir that rpcfuzz replay can send to a server (with no
// rule: replay reports any failure). Each file is expanded as the native
// harness expands it (native.Expander.ExpandFile): a literal case is its
// messages, a choice stream the messages it stands for under opts, which
// must be the Options of the fuzz test that saved it (its methods, params,
// seeds, MaxFrame, and whether its target was a stream) for the messages
// to be the ones it sent. A file that is no Go corpus file is skipped.
// target, when not nil, is recorded as the findings' target.
func ImportGo(goCorpusDir, outDir string, target *TargetInfo, opts native.Options) ([]Imported, error) {
	exp, err := native.New(opts)
	if err != nil {
		return nil, fmt.Errorf("import-go: %w", err)
	}
	entries, err := os.ReadDir(goCorpusDir)
	if err != nil {
		return nil, fmt.Errorf("import-go: %w", err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("import-go: --out: %w", err)
	}
	var out []Imported
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(goCorpusDir, e.Name())
		raw, err := os.ReadFile(path)
		if err != nil {
			return out, fmt.Errorf("import-go: %w", err)
		}
		in, err := exp.ExpandFile(raw)
		if err != nil {
			out = append(out, Imported{File: path, Skipped: err.Error()})
			continue
		}
		c := in.Case
		if len(c.Frames) == 0 && c.Wire == nil {
			out = append(out, Imported{File: path, Skipped: "it expands to no message"})
			continue
		}
		// The id follows the messages, not the file: a choice stream and
		// the literal case of the same messages are one finding.
		h := sha256.New()
		for _, f := range c.Frames {
			h.Write(f)
			h.Write([]byte{0})
		}
		h.Write(c.Wire)
		id := "imported-" + hex.EncodeToString(h.Sum(nil)[:5])
		note := "imported from the Go corpus file " + path
		if !in.Literal {
			note += " (a choice stream: seed " + in.Seed + ")"
		}
		ops := in.OpNames()
		f := &Finding{ID: id, Note: note, InputBytes: caseSize(c), MinimizedBytes: caseSize(c), Ops: ops}
		if target != nil {
			f.Target = *target
		}
		dir := filepath.Join(outDir, id)
		f.Dir = dir
		f.Reproduce = []string{"rpcfuzz replay " + ShellQuote(dir) + " --target URL (or -- COMMAND)"}
		if err := writeFindingDir(dir, f, c, nil); err != nil {
			return out, fmt.Errorf("import-go: %w", err)
		}
		out = append(out, Imported{File: path, Dir: dir})
	}
	if len(out) == 0 {
		return nil, errors.New("import-go: " + goCorpusDir + " holds no corpus files")
	}
	return out, nil
}
