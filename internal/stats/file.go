package stats

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteJSONFile writes r to path atomically: into a temporary file in the
// same directory, synced, then renamed over path. A crash or a full disk
// leaves either the old file or the new one, never half of one.
func WriteJSONFile(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("stats: encoding result: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// WriteFileAtomic writes data to path through a temporary file and a rename.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("stats: writing %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("stats: writing %s: %w", path, err)
	}
	return nil
}

// ReadJSONFile reads a result file and checks its schema version.
func ReadJSONFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("stats: %s is not a result file: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("stats: %s has schema %q; this rpcload reads %q", path, r.Schema, Schema)
	}
	return &r, nil
}
