//go:build unix

package stats

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileNotRegular: a path that is not a regular file is written in
// place, never renamed over (as root, -o /dev/stdout replaced the
// /dev/stdout symlink with a regular file): a symlink stays a symlink and
// its target gets the data, a named pipe stays a pipe and its reader gets
// the data, and nothing is left behind in the directory.
func TestWriteFileNotRegular(t *testing.T) {
	data := []byte(`{"schema":"` + Schema + `"}` + "\n")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) (path string, check func(t *testing.T))
		err   string // "" for none
	}{
		{"symlink to a regular file", func(t *testing.T, dir string) (string, func(*testing.T)) {
			real := filepath.Join(dir, "run-5.json")
			mustWrite(t, real, strings.Repeat("old content, longer than the new ", 10))
			link := filepath.Join(dir, "latest.json")
			mustSymlink(t, "run-5.json", link)
			return link, func(t *testing.T) {
				mustBeSymlink(t, link, "run-5.json")
				mustHold(t, real, data)
			}
		}, ""},
		{"dangling symlink", func(t *testing.T, dir string) (string, func(*testing.T)) {
			link := filepath.Join(dir, "latest.json")
			mustSymlink(t, "new.json", link)
			return link, func(t *testing.T) {
				mustBeSymlink(t, link, "new.json")
				mustHold(t, filepath.Join(dir, "new.json"), data)
			}
		}, ""},
		{"named pipe", func(t *testing.T, dir string) (string, func(*testing.T)) {
			fifo := filepath.Join(dir, "out.fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			// Opened read-write, the reader's open does not wait for a
			// writer, and the write does not wait for a reader.
			r, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return fifo, func(t *testing.T) {
				if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("%s is no longer a named pipe: %v, %v", fifo, fi.Mode(), err)
				}
				if err := r.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(data))
				if _, err := io.ReadFull(r, got); err != nil || string(got) != string(data) {
					t.Errorf("the pipe's reader got %q, %v; want %q", got, err, data)
				}
			}
		}, ""},
		{"symlink to a directory", func(t *testing.T, dir string) (string, func(*testing.T)) {
			if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "out.json")
			mustSymlink(t, "d", link)
			return link, func(t *testing.T) { mustBeSymlink(t, link, "d") }
		}, "it leads to a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, check := tc.setup(t, dir)
			before := dirEntries(t, dir)
			err := WriteFileAtomic(path, data)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("WriteFileAtomic: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), path)):
				t.Fatalf("WriteFileAtomic: %v; want an error naming %s with %q", err, path, tc.err)
			}
			check(t)
			after := dirEntries(t, dir)
			for _, name := range after {
				if strings.Contains(name, ".tmp-") {
					t.Errorf("left behind %s (before: %q, after: %q)", name, before, after)
				}
			}
			if !slices.Contains(after, filepath.Base(path)) {
				t.Errorf("%s is gone: %q", path, after)
			}
		})
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustBeSymlink(t *testing.T, link, target string) {
	t.Helper()
	got, err := os.Readlink(link)
	if err != nil || got != target {
		t.Errorf("%s: readlink %q, %v; want a symlink to %s still", link, got, err, target)
	}
}

func mustHold(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(want) {
		t.Errorf("%s holds %q, %v; want %q", path, got, err, want)
	}
}
