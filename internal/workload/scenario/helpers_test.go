package scenario

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

// writeFile writes content to dir/name.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// expectsNothing reports whether e is the zero expectation.
func expectsNothing(e Expect) bool {
	return !e.ResultEqualsParams && e.Result == nil && e.ResultSchemaJSON == nil && e.ErrorCode == nil && e.ResultEquals == nil
}
