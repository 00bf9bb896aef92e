package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A push of a commit sends the pack the commit's objects were written to as it is on disk:
// with 100 objects or more the remote keeps a pack as received, and it is the same file.
func TestAPushSendsTheCommitsPackAsWritten(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	var changes []Change
	for i := range 150 {
		changes = append(changes, Change{Path: fmt.Sprintf("apps/cm-%03d.yaml", i), Content: fmt.Appendf(nil, "n: %d\n", i)})
	}
	changes = append(changes, Change{Path: "apps/same.yaml", Content: []byte("n: 7\n")}) // a blob twice in one commit
	c1 := mustCommit(t, r, "", changes...)
	if len(r.written) != 1 {
		t.Fatalf("the commit wrote %d packs, want 1", len(r.written))
	}
	written := r.written[0].name
	if err := r.Push(testCtx(t), "main", "", c1); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(g.Root(), "app.git", "objects", "pack", "pack-"+written.String()+".pack")
	if _, err := os.Stat(kept); err != nil {
		packs, _ := filepath.Glob(filepath.Join(g.Root(), "app.git", "objects", "pack", "*.pack"))
		t.Fatalf("the remote does not hold the pack the commit wrote (%s): it holds %v", written, packs)
	}
	if len(r.written) != 0 {
		t.Errorf("%d packs are still remembered after the push that sent them", len(r.written))
	}
	remoteIsWhole(t, g)
}

// Commits pushed together send their packs as one; a push whose objects are not all in
// the packs remembered has its pack encoded.
func TestAPushOfSeveralCommitsSendsTheirPacksTogether(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	c1 := mustCommit(t, r, "", Change{Path: "a/x.yaml", Content: []byte("x1\n")}, Change{Path: "b/y.yaml", Content: []byte("y\n")})
	if err := r.Push(testCtx(t), "main", "", c1); err != nil {
		t.Fatal(err)
	}
	c2 := mustCommit(t, r, c1, Change{Path: "a/x.yaml", Content: []byte("x2\n")})
	c3 := mustCommit(t, r, c2, Change{Path: "b/z.yaml", Content: []byte("z\n")})
	hashes, err := r.objectsToSend(plumbing.NewHash(c3), []plumbing.Hash{plumbing.NewHash(c1)})
	if err != nil {
		t.Fatal(err)
	}
	if pack, ok := r.copiedPacks(hashes); !ok {
		t.Fatalf("the %d objects of two commits were not found in their %d packs", len(hashes), len(r.written))
	} else {
		_ = pack.Close()
	}
	if err := r.Push(testCtx(t), "main", c1, c3); err != nil {
		t.Fatal(err)
	}
	remoteIsWhole(t, g)

	// Past its bounds the record of written packs starts again: the packs it forgot are
	// still needed, and the push encodes its pack.
	c4 := mustCommit(t, r, c3, Change{Path: "c/w.yaml", Content: []byte("w\n")})
	for range maxWrittenPacks {
		r.noteWritten(plumbing.ZeroHash, nil)
	}
	if len(r.written) >= maxWrittenPacks {
		t.Fatalf("%d packs remembered, bound %d", len(r.written), maxWrittenPacks)
	}
	r.written = r.written[len(r.written)-1:]
	hashes, err = r.objectsToSend(plumbing.NewHash(c4), []plumbing.Hash{plumbing.NewHash(c3)})
	if err != nil {
		t.Fatal(err)
	}
	if pack, ok := r.copiedPacks(hashes); ok {
		_ = pack.Close()
		t.Fatalf("a push whose objects are in packs no longer remembered would copy the others")
	}
	if err := r.Push(testCtx(t), "main", c3, c4); err != nil {
		t.Fatal(err)
	}
	remoteIsWhole(t, g)
	files, err := g.ListFiles("app.git", "main")
	if err != nil || len(files) != 4 {
		t.Fatalf("the remote holds %v (%v); want a/x.yaml, b/y.yaml, b/z.yaml, c/w.yaml", files, err)
	}
}

// A pack the next push would copy that a merge of packs rewrote meanwhile is not copied.
func TestAPackMergedAwayIsNotCopied(t *testing.T) {
	r, err := Open(t.TempDir(), "https://git.example.com/team/app.git", Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	c1 := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a\n")})
	hashes, err := r.objectsToSend(plumbing.NewHash(c1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.packPath(r.written[0].name)); err != nil {
		t.Fatal(err)
	}
	if pack, ok := r.copiedPacks(hashes); ok {
		_ = pack.Close()
		t.Fatalf("a pack whose file is gone was copied")
	}
}

// remoteIsWhole checks the remote repository with git fsck --strict.
func remoteIsWhole(t *testing.T, g *testenv.GitServer) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", filepath.Join(g.Root(), "app.git"), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck of the remote: %v\n%s", err, out)
	}
}
