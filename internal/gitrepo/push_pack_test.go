package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/iotest"

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

// A remote that checks what it receives (receive.fsckObjects, index-pack --strict) refuses a
// pack naming an object twice. Edits undone and made again, and a replay after the remote
// moved, write no object twice into the packs a push copies.
func TestAStrictRemoteTakesEditsUndoneAndReplayed(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	if out, err := exec.Command("git", "--git-dir", filepath.Join(g.Root(), "app.git"), "config", "receive.fsckObjects", "true").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	many := func(round int) []Change {
		var cs []Change
		for i := range 120 { // a pack of 100 objects or more is indexed, with --strict
			cs = append(cs, Change{Path: fmt.Sprintf("apps/cm-%03d.yaml", i), Content: fmt.Appendf(nil, "n: %d\nround: %d\n", i, round)})
		}
		return cs
	}
	c1 := mustCommit(t, r, "", many(1)...)
	c2 := mustCommit(t, r, c1, many(2)...)
	c3 := mustCommit(t, r, c2, many(1)...) // c1's files again
	if err := r.Push(testCtx(t), "main", "", c3); err != nil {
		t.Fatalf("push of an edit undone and made again: %v", err)
	}
	remoteIsWhole(t, g)

	// Our commit is built; someone pushes first; the push is refused and replayed.
	ours := mustCommit(t, r, c3, many(3)...)
	moved, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: map[string]string{"f.txt": "1\n"}})
	if err != nil {
		t.Fatal(err)
	}
	var movedErr *RemoteMovedError
	if err := r.Push(testCtx(t), "main", c3, ours); !errors.As(err, &movedErr) {
		t.Fatalf("push onto a moved branch returned %v, want RemoteMovedError", err)
	}
	base, err := r.Fetch(testCtx(t), "main")
	if err != nil || base != moved {
		t.Fatalf("fetch = %s, %v; want %s", base, err, moved)
	}
	replayed := mustCommit(t, r, base, many(3)...)
	hashes, err := r.objectsToSend(plumbing.NewHash(replayed), []plumbing.Hash{plumbing.NewHash(base)})
	if err != nil {
		t.Fatal(err)
	}
	if pack, ok := r.copiedPacks(hashes); !ok {
		t.Errorf("the replayed commit's pack is not copied: the refused commit's pack is still remembered")
	} else {
		_ = pack.Close()
	}
	if err := r.Push(testCtx(t), "main", base, replayed); err != nil {
		t.Fatalf("push of the replayed commit: %v", err)
	}
	remoteIsWhole(t, g)
}

// A new tip that does not descend from the remote's is never pushed: the operator does not
// rewrite history, even when the remote is where the commits were said to be built on.
func TestAPushThatWouldRewriteHistoryIsRefused(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	c1 := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a\n")})
	if err := r.Push(testCtx(t), "main", "", c1); err != nil {
		t.Fatal(err)
	}
	unrelated := mustCommit(t, r, "", Change{Path: "b.yaml", Content: []byte("b\n")})
	var movedErr *RemoteMovedError
	if err := r.Push(testCtx(t), "main", c1, unrelated); !errors.As(err, &movedErr) {
		t.Fatalf("a push that is not a fast-forward returned %v, want RemoteMovedError", err)
	}
	if tip, _ := g.BranchTip("app.git", "main"); tip != c1 {
		t.Fatalf("the remote moved to %s; want it left at %s", tip, c1)
	}
}

// The pack copied from several files reads the same in any size of reads: a header counting
// every entry, the entries, and the SHA-1 of all that.
func TestACopiedPackReadsWholeInSmallReads(t *testing.T) {
	r, err := Open(t.TempDir(), "https://git.example.com/team/app.git", Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	c1 := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a\n")})
	c2 := mustCommit(t, r, c1, Change{Path: "b.yaml", Content: []byte("b\n")})
	hashes, err := r.objectsToSend(plumbing.NewHash(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func(small bool) []byte {
		pack, ok := r.copiedPacks(hashes)
		if !ok {
			t.Fatalf("the packs of two commits were not copied")
		}
		defer pack.Close()
		var src io.Reader = pack
		if small {
			src = iotest.OneByteReader(pack)
		}
		b, err := io.ReadAll(src)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	whole, bytewise := read(false), read(true)
	if !bytes.Equal(whole, bytewise) {
		t.Fatalf("read byte by byte the pack differs (%d vs %d bytes)", len(bytewise), len(whole))
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	cmd := exec.Command("git", "--git-dir", dir, "index-pack", "--strict", "--stdin")
	cmd.Stdin = bytes.NewReader(bytewise)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git index-pack --strict of the copied pack: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "--git-dir", dir, "cat-file", "-e", c2).CombinedOutput(); err != nil {
		t.Fatalf("the copied pack lacks the commit: %v\n%s", err, out)
	}
}
