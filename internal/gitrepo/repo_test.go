package gitrepo

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func sig(name string) Signature {
	return Signature{Name: name, Email: name + "@example.com", When: time.Unix(1700000000, 0).UTC()}
}

func commitSpec(msg string) CommitSpec {
	return CommitSpec{Author: sig("alice"), Committer: sig("bot"), Message: msg}
}

// newServerRepo makes an empty remote repository and an HTTP front end for it.
func newServerRepo(t *testing.T, auth testenv.HTTPAuth) (*testenv.GitServer, *testenv.HTTPFrontend) {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo("app.git"); err != nil {
		t.Fatal(err)
	}
	return g, g.ServeHTTP(t, auth)
}

func mustCommit(t *testing.T, r *Repo, parent string, changes ...Change) string {
	t.Helper()
	sha, err := r.Commit(parent, changes, commitSpec("edit"))
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func TestFirstPushCreatesTheBranch(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{Username: "bot", Password: "pw"})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{Username: "bot", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := r.Fetch(testCtx(t), "main")
	if err != nil || tip != "" {
		t.Fatalf("fetch of an empty repository = %q, %v; want no tip", tip, err)
	}
	sha := mustCommit(t, r, "", Change{Path: "a/b/c.yaml", Content: []byte("x: 1\n")})
	if err := r.Push(testCtx(t), "main", "", sha); err != nil {
		t.Fatal(err)
	}
	if remote, _ := g.BranchTip("app.git", "main"); remote != sha {
		t.Fatalf("remote tip %s, want %s", remote, sha)
	}
	content, err := g.ReadFile("app.git", "main", "a/b/c.yaml")
	if err != nil || string(content) != "x: 1\n" {
		t.Fatalf("file on the remote = %q, %v", content, err)
	}
	log, _ := g.Log("app.git", "main")
	if len(log) != 1 || log[0].Author != "alice <alice@example.com>" {
		t.Fatalf("log = %+v, want one commit authored by alice", log)
	}
}

func TestPushIsCompareAndSwapAgainstTheExpectedTip(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	foreign, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: map[string]string{"f.txt": "1\n"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.Fetch(testCtx(t), "main")
	if err != nil || base != foreign {
		t.Fatalf("fetch = %s, %v; want %s", base, err, foreign)
	}
	ours := mustCommit(t, r, base, Change{Path: "ours.yaml", Content: []byte("a: 1\n")})

	// Someone pushes after we built our commit.
	moved, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: map[string]string{"f.txt": "2\n"}})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Push(testCtx(t), "main", base, ours)
	var movedErr *RemoteMovedError
	if !errors.As(err, &movedErr) {
		t.Fatalf("push onto a moved branch returned %v, want RemoteMovedError", err)
	}
	if tip, _ := g.BranchTip("app.git", "main"); tip != moved {
		t.Fatalf("remote tip %s after a refused push, want the foreign %s (nothing overwritten)", tip, moved)
	}

	// Rebuilt on the new tip, the push goes through and keeps the foreign commit.
	newBase, err := r.Fetch(testCtx(t), "main")
	if err != nil || newBase != moved {
		t.Fatalf("fetch = %s, %v", newBase, err)
	}
	rebuilt := mustCommit(t, r, newBase, Change{Path: "ours.yaml", Content: []byte("a: 1\n")})
	if err := r.Push(testCtx(t), "main", newBase, rebuilt); err != nil {
		t.Fatal(err)
	}
	if ok, _ := g.IsAncestor("app.git", moved, rebuilt); !ok {
		t.Fatal("the foreign commit is not an ancestor of the pushed tip")
	}
}

func TestPushToAnAbsentBranchThatAppearedIsRefused(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	ours := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a: 1\n")})
	theirs, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: map[string]string{"b": "b\n"}})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Push(testCtx(t), "main", "", ours)
	var movedErr *RemoteMovedError
	if !errors.As(err, &movedErr) {
		t.Fatalf("push = %v, want RemoteMovedError", err)
	}
	if tip, _ := g.BranchTip("app.git", "main"); tip != theirs {
		t.Fatal("a branch created by someone else was overwritten")
	}
}

func TestBearerTokenAuthenticates(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{BearerToken: "tok"})
	if _, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: map[string]string{"a": "a\n"}}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{BearerToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if tip, err := r.Fetch(testCtx(t), "main"); err != nil || tip == "" {
		t.Fatalf("fetch with a bearer token = %q, %v", tip, err)
	}
}

func TestWrongPasswordIsPermanentAndNeverEchoed(t *testing.T) {
	_, front := newServerRepo(t, testenv.HTTPAuth{Username: "bot", Password: "right-password"})
	secret := "wrong-secret-value-123"
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{Username: "bot", Password: secret})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Fetch(testCtx(t), "main")
	var remoteErr *RemoteError
	if !errors.As(err, &remoteErr) || !remoteErr.Permanent() {
		t.Fatalf("fetch with a wrong password = %v, want a permanent RemoteError", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error contains the password: %v", err)
	}
}

func TestURLCredentialsAreRedactedFromErrors(t *testing.T) {
	_, front := newServerRepo(t, testenv.HTTPAuth{Username: "bot", Password: "pw"})
	url := strings.Replace(front.URL("missing.git"), "http://", "http://bot:url-secret-42@", 1)
	r, err := Open(t.TempDir(), url, Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Fetch(testCtx(t), "main")
	if err == nil {
		t.Fatal("fetch of a missing repository succeeded")
	}
	if strings.Contains(err.Error(), "url-secret-42") {
		t.Fatalf("the error contains the URL's password: %v", err)
	}
}

func TestCommitEditsTreesAlongChangedPathsOnly(t *testing.T) {
	_, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	first := mustCommit(t, r, "",
		Change{Path: "keep/one.yaml", Content: []byte("1\n")},
		Change{Path: "dir/a.yaml", Content: []byte("a\n")},
		Change{Path: "dir/sub/b.yaml", Content: []byte("b\n")})
	second := mustCommit(t, r, first,
		Change{Path: "dir/sub/b.yaml", Delete: true},
		Change{Path: "dir/a.yaml", Content: []byte("a2\n")},
		Change{Path: "new/c.yaml", Content: []byte("c\n")})

	files, err := r.ReadFiles(second, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path+"="+string(f.Content))
	}
	want := "dir/a.yaml=a2\n,keep/one.yaml=1\n,new/c.yaml=c\n"
	if strings.Join(got, ",") != want {
		t.Fatalf("files = %q, want %q (deleting the last file of a folder removes the folder)", strings.Join(got, ","), want)
	}
	changed, err := r.ChangedPaths(first, second, "")
	if err != nil || strings.Join(changed, ",") != "dir/a.yaml,dir/sub/b.yaml,new/c.yaml" {
		t.Fatalf("changed paths = %v, %v", changed, err)
	}
	scoped, err := r.ChangedPaths(first, second, "dir")
	if err != nil || strings.Join(scoped, ",") != "a.yaml,sub/b.yaml" {
		t.Fatalf("changed paths under dir = %v, %v", scoped, err)
	}
	if _, err := r.Commit(second, []Change{{Path: "dir/a.yaml", Content: []byte("a2\n")}}, commitSpec("same")); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("a commit that changes nothing returned %v, want ErrNothingToCommit", err)
	}
	if content, ok, err := r.ReadFile(second, "new/c.yaml"); err != nil || !ok || string(content) != "c\n" {
		t.Fatalf("ReadFile = %q %v %v", content, ok, err)
	}
	if _, ok, _ := r.ReadFile(second, "dir/sub/b.yaml"); ok {
		t.Fatal("a deleted file is still readable")
	}
}

func TestCommitRefusesPathsThatEscape(t *testing.T) {
	_, front := newServerRepo(t, testenv.HTTPAuth{})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x", "/abs", "a/../b", ".git/config", "a//b", ""} {
		if _, err := r.Commit("", []Change{{Path: p, Content: []byte("x")}}, commitSpec("bad")); err == nil {
			t.Errorf("path %q was accepted", p)
		}
	}
}

func TestTheLocalCopyPushesWithoutDeltaSearch(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, "https://git.example.com/team/app.git", Credentials{Username: "u", Password: "p"}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "--git-dir", dir, "config", "pack.window").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("pack.window = %q (%v), want 0", out, err)
	}
}
