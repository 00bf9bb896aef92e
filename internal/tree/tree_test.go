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

// Every spelling of .git that some checkout reads as the repository's own folder is
// caught, and names that merely resemble it are not.
func TestEverySpellingOfDotGitIsCaught(t *testing.T) {
	for _, s := range []string{".git", ".GIT", ".Git", ".git.", ".git ", ".git. .", "git~1", "GIT~1", ".g\u200cit", "\ufeff.git"} {
		if !GitDir(s) {
			t.Errorf("%q passes as an ordinary name", s)
		}
	}
	for _, s := range []string{"git", ".gitignore", ".github", "x.git", ".git~1", "git~2"} {
		if GitDir(s) {
			t.Errorf("%q is taken for .git", s)
		}
	}
}
