package gitrepo

import (
	"os/exec"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/revlist"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func hashSet(hs []plumbing.Hash) map[plumbing.Hash]bool {
	m := map[plumbing.Hash]bool{}
	for _, h := range hs {
		m[h] = true
	}
	return m
}

// walkSendsWhatTheRemoteLacks checks that the push walk answers, and with every object
// go-git's exact walk finds; it returns the walk's answer.
func walkSendsWhatTheRemoteLacks(t *testing.T, st localStorage, want, have []plumbing.Hash) []plumbing.Hash {
	t.Helper()
	exact, err := revlist.Objects(st.Storage, want, have)
	if err != nil {
		t.Fatal(err)
	}
	got, walked, err := st.newObjects(want, have)
	if err != nil || !walked {
		t.Fatalf("the push walk did not answer (%v, %v)", walked, err)
	}
	gotSet := hashSet(got)
	for _, h := range exact {
		if !gotSet[h] {
			t.Errorf("the push walk leaves out %s, which the remote lacks", h)
		}
	}
	return got
}

// A push sends what the remote lacks, found by comparing each new commit with its parent:
// never less than go-git's exact walk (which marks everything the remote has), never an
// object the pushed commits do not reach; with no have, everything; with a history that
// does not meet the remote's, go-git's walk answers. The push itself lands whole.
func TestAPushSendsWhatTheRemoteLacks(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	dir := t.TempDir()
	r, err := Open(dir, front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := r.repo.Storer.(localStorage)
	if !ok {
		t.Fatalf("the local copy's storage is a %T, not the one with the push walk", r.repo.Storer)
	}
	c1 := mustCommit(t, r, "",
		Change{Path: "a/x.yaml", Content: []byte("x1\n")},
		Change{Path: "a/y.yaml", Content: []byte("y\n")},
		Change{Path: "b/z.yaml", Content: []byte("z\n")})
	if err := r.Push(testCtx(t), "main", "", c1); err != nil {
		t.Fatal(err)
	}
	c2 := mustCommit(t, r, c1,
		Change{Path: "a/x.yaml", Content: []byte("x2\n")},
		Change{Path: "b/z.yaml", Delete: true},
		Change{Path: "c/w.yaml", Content: []byte("y\n")}) // a blob the remote has
	c3 := mustCommit(t, r, c2, Change{Path: "a/x.yaml", Content: []byte("x1\n")})
	want, have := []plumbing.Hash{plumbing.NewHash(c3)}, []plumbing.Hash{plumbing.NewHash(c1)}

	got := walkSendsWhatTheRemoteLacks(t, st, want, have)
	reachable, err := revlist.Objects(st.Storage, want, nil)
	if err != nil {
		t.Fatal(err)
	}
	reach := hashSet(reachable)
	for _, h := range got {
		if !reach[h] {
			t.Errorf("the push walk sends %s, which the pushed commits do not reach", h)
		}
	}
	if len(got) >= len(reachable) {
		t.Errorf("the push walk sends %d objects, as many as the commits reach (%d): it compared nothing", len(got), len(reachable))
	}

	first, walked, err := st.newObjects(want, nil)
	if err != nil || !walked || len(hashSet(first)) != len(reach) {
		t.Errorf("with no have the push walk sends %d objects (%v, %v); the commits reach %d", len(hashSet(first)), walked, err, len(reach))
	}
	other := mustCommit(t, r, "", Change{Path: "o.yaml", Content: []byte("o\n")})
	if _, walked, err := st.newObjects(want, []plumbing.Hash{plumbing.NewHash(other)}); err != nil || walked {
		t.Errorf("a history that does not meet the have was walked (%v, %v); go-git's walk should answer", walked, err)
	}

	if err := r.Push(testCtx(t), "main", c1, c3); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "--git-dir", g.Root()+"/app.git", "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck of the remote: %v\n%s", err, out)
	}
	files, err := g.ListFiles("app.git", "main")
	if err != nil || len(files) != 3 {
		t.Fatalf("the remote holds %v (%v); want a/x.yaml, a/y.yaml, c/w.yaml", files, err)
	}
}

// Commits pushed together that undo an edit and make it again: the last commit's tree is
// the first one's, met first while comparing the last with the one between; what the first
// commit brought beside the undone edit is still sent.
func TestAPushOfAnEditUndoneAndMadeAgainSendsEverythingNew(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	base := mustCommit(t, r, "", Change{Path: "f.yaml", Content: []byte("v0\n")}, Change{Path: "d/g.yaml", Content: []byte("g0\n")})
	if err := r.Push(testCtx(t), "main", "", base); err != nil {
		t.Fatal(err)
	}
	a := mustCommit(t, r, base, Change{Path: "f.yaml", Content: []byte("v1\n")}, Change{Path: "d/g.yaml", Content: []byte("g1\n")})
	b := mustCommit(t, r, a, Change{Path: "f.yaml", Content: []byte("v0\n")})
	c := mustCommit(t, r, b, Change{Path: "f.yaml", Content: []byte("v1\n")})
	st := r.repo.Storer.(localStorage)
	want, have := []plumbing.Hash{plumbing.NewHash(c)}, []plumbing.Hash{plumbing.NewHash(base)}
	walkSendsWhatTheRemoteLacks(t, st, want, have)
	if err := r.Push(testCtx(t), "main", base, c); err != nil {
		t.Fatal(err)
	}
	content, err := g.ReadFile("app.git", "main", "d/g.yaml")
	if err != nil || string(content) != "g1\n" {
		t.Fatalf("the remote reads d/g.yaml = %q, %v", content, err)
	}
	if out, err := exec.Command("git", "--git-dir", g.Root()+"/app.git", "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck of the remote: %v\n%s", err, out)
	}
}
