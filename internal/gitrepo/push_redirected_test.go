package gitrepo

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A push whose discovery was redirected to another host went there without the
// repository's credentials, which go-git gives the post itself: it cannot be streamed as
// go-git would send it, so go-git sends it, the whole pack, and the branch moves.
func TestAPushRedirectedToAnotherHostIsSentByGoGit(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	target, err := url.Parse(front.URL("app.git"))
	if err != nil {
		t.Fatal(err)
	}
	var redirected atomic.Int32
	// The repository's URL names "localhost"; every request there is sent on to the Git
	// server at 127.0.0.1, another host to Go's HTTP client, which then drops the
	// credentials.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
		to := *r.URL
		to.Scheme, to.Host = target.Scheme, target.Host
		http.Redirect(w, r, to.String(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	u, err := url.Parse(redirector.URL)
	if err != nil {
		t.Fatal(err)
	}
	repoURL := "http://localhost:" + u.Port() + "/app.git"
	r, err := Open(t.TempDir(), repoURL, Credentials{Username: "bot", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	r.streamAbove = 0 // every push that can be is streamed
	sha := mustCommit(t, r, "", largeChanges(t)[:4]...)
	if err := r.Push(testCtx(t), "main", "", sha); err != nil {
		t.Fatalf("a push redirected to another host: %v", err)
	}
	if tip, _ := g.BranchTip("app.git", "main"); tip != sha {
		t.Fatalf("remote tip %s, want %s", tip, sha)
	}
	if redirected.Load() == 0 {
		t.Fatal("no request was redirected: the test tested nothing")
	}
	if n := front.StreamedPushes(); n != 0 {
		t.Fatalf("%d pushes streamed, want none: the discovery went without the credentials", n)
	}
	remoteIsWhole(t, g)
}
