package live

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsTerminal(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	closed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()

	tests := []struct {
		name string
		f    *os.File
		want bool
	}{
		{"regular file", file, false},
		{"pipe", pw, false},
		{"nil", nil, false},
		{"closed file", closed, false},
		// The documented false positive: a character device that is no terminal.
		{"/dev/null", devNull, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTerminal(tt.f); got != tt.want {
				t.Errorf("IsTerminal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTerminalWidthFallsBackToColumns(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	tests := []struct {
		columns string
		want    int
	}{
		{"", 0},
		{"77", 77},
		{"-3", 0},
		{"wide", 0},
	}
	for _, tt := range tests {
		t.Run("COLUMNS="+tt.columns, func(t *testing.T) {
			t.Setenv("COLUMNS", tt.columns)
			// A file is no terminal, so only COLUMNS can tell.
			if got := TerminalWidth(file); got != tt.want {
				t.Errorf("TerminalWidth = %d, want %d", got, tt.want)
			}
		})
	}
}
