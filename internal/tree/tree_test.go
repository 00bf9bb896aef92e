package tree

import "testing"

// A GitTarget's spec.path names one folder however it is written, and a path is inside a
// folder only below it ("a" does not contain "ab").
func TestFolderPathsNameOneFolder(t *testing.T) {
	for spec, want := range map[string]string{".": "", "/": "", "": "", "./a/b/": "a/b", "a//b": "a/b", "/a": "a"} {
		if got := Folder(spec); got != want {
			t.Errorf("Folder(%q) = %q, want %q", spec, got, want)
		}
	}
	for _, c := range []struct {
		folder, p, rel string
		in             bool
	}{
		{"", "x/y.yaml", "x/y.yaml", true},
		{"a", "a/y.yaml", "y.yaml", true},
		{"a", "ab/y.yaml", "", false},
		{"a/b", "a/y.yaml", "", false},
	} {
		rel, in := Rel(c.folder, c.p)
		if in != c.in || (in && rel != c.rel) {
			t.Errorf("Rel(%q, %q) = %q, %v; want %q, %v", c.folder, c.p, rel, in, c.rel, c.in)
		}
		if in && Join(c.folder, rel) != c.p {
			t.Errorf("Join(%q, %q) = %q, want %q", c.folder, rel, Join(c.folder, rel), c.p)
		}
	}
}
