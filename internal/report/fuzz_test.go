package report

import (
	"sync"
	"testing"
)

var (
	benignOnce     sync.Once
	benignSkeleton []string
)

// FuzzWriteHTML puts arbitrary strings everywhere a result holds text and
// checks that the page's tags and attribute names stay exactly those of a
// page with a harmless string: no string can add, remove or alter markup.
func FuzzWriteHTML(f *testing.F) {
	for _, s := range []string{"", "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`, "</svg>", "</title>", "<!--", "\x00\xff\xfe", "&amp;", "{{.}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		benignOnce.Do(func() {
			benignSkeleton = skeleton(render(t, Input{Name: "name-benign", Result: sampleResult(t, "benign", 200)}))
		})
		page := render(t, Input{Name: "name" + s, Result: sampleResult(t, s, 200)})
		if got := skeleton(page); !equal(got, benignSkeleton) {
			t.Fatalf("the page's tags depend on the string %q: %s", s, firstDifference(benignSkeleton, got))
		}
	})
}
