package profile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestListAll: the pages are followed by their cursors and joined; an
// absent or null list is empty; a list that is not one, a result that is
// not JSON, and a refused request are errors; a cursor that never ends
// stops at MaxListPages.
func TestListAll(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pages map[string]string // params sent -> result
		want  string            // the joined result, or "error: TEXT"
		calls int
	}{
		{"one page", map[string]string{"": `{"tools":[{"name":"a"}]}`}, `{"tools":[{"name":"a"}]}`, 1},
		{"two pages", map[string]string{"": `{"tools":[{"name":"a"}],"nextCursor":"c2"}`, `{"cursor":"c2"}`: `{"tools":[{"name":"b"}],"nextCursor":""}`},
			`{"tools":[{"name":"a"},{"name":"b"}]}`, 2},
		{"absent list", map[string]string{"": `{}`}, `{"tools":[]}`, 1},
		{"null list", map[string]string{"": `{"tools":null}`}, `{"tools":[]}`, 1},
		{"not a list", map[string]string{"": `{"tools":{}}`}, `error: "tools" is not a list`, 1},
		{"not JSON", map[string]string{"": `{`}, "error: tools/list result", 1},
		{"refused", map[string]string{}, "error: refused", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			got, err := ListAll("tools/list", "tools", func(params []byte) ([]byte, error) {
				calls++
				res, ok := tc.pages[string(params)]
				if !ok {
					return nil, errors.New("refused")
				}
				return []byte(res), nil
			})
			switch {
			case strings.HasPrefix(tc.want, "error: "):
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "error: ")) {
					t.Errorf("error %v, want one saying %q", err, tc.want)
				}
			case err != nil || string(got) != tc.want:
				t.Errorf("got %s %v, want %s", got, err, tc.want)
			}
			if calls != tc.calls {
				t.Errorf("%d calls, want %d", calls, tc.calls)
			}
		})
	}
	calls := 0
	got, err := ListAll("tools/list", "tools", func([]byte) ([]byte, error) {
		calls++
		return fmt.Appendf(nil, `{"tools":[%d],"nextCursor":"more"}`, calls), nil
	})
	if err != nil || calls != MaxListPages || strings.Count(string(got), ",")+1 != MaxListPages {
		t.Errorf("an endless cursor: %d calls, %s %v", calls, got, err)
	}
}
