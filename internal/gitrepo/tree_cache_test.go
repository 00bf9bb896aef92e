package gitrepo

import (
	"fmt"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// Reads at a commit go through trees decoded once: a path below a file or a folder reads
// as no file, and a commit's files still read in full after merging packs reopened the
// local copy (a decoded tree reads its subtrees through the storage it came from).
func TestFilesReadThroughDecodedTrees(t *testing.T) {
	_, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	first := mustCommit(t, r, "",
		Change{Path: "a/b.yaml", Content: []byte("b\n")},
		Change{Path: "a/c/d.yaml", Content: []byte("d\n")})
	for _, p := range []string{"a/b.yaml/x", "a/c", "a", "x/b.yaml", "a/c/e.yaml"} {
		if content, ok, err := r.ReadFile(first, p); err != nil || ok {
			t.Errorf("ReadFile(%q) = %q, %v, %v; want no file", p, content, ok, err)
		}
	}
	if content, ok, err := r.ReadFile(first, "a/c/d.yaml"); err != nil || !ok || string(content) != "d\n" {
		t.Fatalf("ReadFile(a/c/d.yaml) = %q, %v, %v", content, ok, err)
	}
	if files, err := r.ReadFiles(first, "a"); err != nil || len(files) != 2 {
		t.Fatalf("ReadFiles(a) = %v, %v", files, err)
	}
	tip := first
	for i := range 2 * mergeFanIn {
		tip = mustCommit(t, r, tip, Change{Path: fmt.Sprintf("more/%03d.yaml", i), Content: fmt.Appendf(nil, "n: %d\n", i)})
	}
	before := r.repo
	if err := r.MergePacks(); err != nil {
		t.Fatal(err)
	}
	if r.repo == before {
		t.Fatal("no merge reopened the local copy: the test does not reach the reopen")
	}
	files, err := r.ReadFiles(first, "a")
	if err != nil || len(files) != 2 || string(files[1].Content) != "d\n" {
		t.Fatalf("after the merge ReadFiles(a) = %v, %v", files, err)
	}
	if content, ok, err := r.ReadFile(tip, "more/000.yaml"); err != nil || !ok || string(content) != "n: 0\n" {
		t.Fatalf("after the merge ReadFile(more/000.yaml) = %q, %v, %v", content, ok, err)
	}
}
