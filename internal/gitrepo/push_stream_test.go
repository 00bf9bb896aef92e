package gitrepo

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// largeChanges are files of random bytes (nothing to compress) adding up to more than
// largePack.
func largeChanges(t *testing.T) []Change {
	t.Helper()
	var changes []Change
	for i := range largePack/(64<<10) + 8 {
		content := make([]byte, 64<<10)
		if _, err := rand.Read(content); err != nil {
			t.Fatal(err)
		}
		changes = append(changes, Change{Path: fmt.Sprintf("blobs/b-%03d.bin", i), Content: content})
	}
	return changes
}

// A push over HTTP whose pack is large sends its request as a stream, without a length: the
// whole request is never held in memory (docs/branch-worker.md#push). A small one is sent
// by go-git as before.
func TestALargePushOverHTTPStreamsItsRequest(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{Username: "bot", Password: "pw"})
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{Username: "bot", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	small := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a: 1\n")})
	if err := r.Push(testCtx(t), "main", "", small); err != nil {
		t.Fatal(err)
	}
	if n := front.StreamedPushes(); n != 0 {
		t.Fatalf("a small push was streamed (%d)", n)
	}
	large := mustCommit(t, r, small, largeChanges(t)...)
	if err := r.Push(testCtx(t), "main", small, large); err != nil {
		t.Fatal(err)
	}
	if n := front.StreamedPushes(); n != 1 {
		t.Fatalf("%d pushes streamed, want the large one", n)
	}
	if tip, _ := g.BranchTip("app.git", "main"); tip != large {
		t.Fatalf("remote tip %s, want %s", tip, large)
	}
	remoteIsWhole(t, g)
}

// A streamed push keeps the rules of any push: the credentials and the private CA of the
// repository, compare-and-swap against the expected tip, and a refusal by the server
// returned as an error that names no credential.
func TestAStreamedPushKeepsThePushRules(t *testing.T) {
	streamed := func(t *testing.T, url string, creds Credentials) *Repo {
		t.Helper()
		r, err := Open(t.TempDir(), url, creds)
		if err != nil {
			t.Fatal(err)
		}
		r.streamAbove = 0 // every push is streamed
		return r
	}
	t.Run("a bearer token over a private CA", func(t *testing.T) {
		ca := testenv.NewCA(t, "private-git-ca")
		g := testenv.NewGitServer(t)
		if err := g.CreateRepo("app.git"); err != nil {
			t.Fatal(err)
		}
		front := g.ServeHTTPS(t, testenv.HTTPAuth{BearerToken: "tok"}, ca)
		r := streamed(t, front.URL("app.git"), Credentials{BearerToken: "tok", CABundle: ca.PEM})
		sha := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a: 1\n")})
		if err := r.Push(testCtx(t), "main", "", sha); err != nil {
			t.Fatal(err)
		}
		if tip, _ := g.BranchTip("app.git", "main"); tip != sha || front.StreamedPushes() != 1 {
			t.Fatalf("remote tip %s after %d streamed pushes, want %s after 1", tip, front.StreamedPushes(), sha)
		}
	})
	t.Run("a moved branch is not overwritten", func(t *testing.T) {
		g, front := newServerRepo(t, testenv.HTTPAuth{})
		r := streamed(t, front.URL("app.git"), Credentials{})
		ours := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a: 1\n")})
		theirs, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: map[string]string{"b": "b\n"}})
		if err != nil {
			t.Fatal(err)
		}
		var moved *RemoteMovedError
		if err := r.Push(testCtx(t), "main", "", ours); !errors.As(err, &moved) {
			t.Fatalf("push = %v, want RemoteMovedError", err)
		}
		if tip, _ := g.BranchTip("app.git", "main"); tip != theirs {
			t.Fatal("a branch created by someone else was overwritten")
		}
	})
	t.Run("a refusal by the server is an error without credentials", func(t *testing.T) {
		g, front := newServerRepo(t, testenv.HTTPAuth{Username: "bot", Password: "s3cret-pw"})
		front.RefusePushes(1)
		r := streamed(t, front.URL("app.git"), Credentials{Username: "bot", Password: "s3cret-pw"})
		sha := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a: 1\n")})
		err := r.Push(testCtx(t), "main", "", sha)
		if err == nil || !strings.Contains(err.Error(), "500") || strings.Contains(err.Error(), "s3cret-pw") {
			t.Fatalf("push refused by the server = %v, want its status and no password", err)
		}
		if tip, _ := g.BranchTip("app.git", "main"); tip != "" {
			t.Fatalf("a refused push left the remote at %s", tip)
		}
		if front.RefusedPushes() != 1 || front.StreamedPushes() != 1 {
			t.Fatalf("%d refused, %d streamed; want the streamed push refused", front.RefusedPushes(), front.StreamedPushes())
		}
	})
	t.Run("a server that takes no streamed push gets the push as go-git sends it", func(t *testing.T) {
		g, front := newServerRepo(t, testenv.HTTPAuth{})
		front.RefuseStreamedPushes(true)
		r := streamed(t, front.URL("app.git"), Credentials{})
		first := mustCommit(t, r, "", Change{Path: "a.yaml", Content: []byte("a: 1\n")})
		if err := r.Push(testCtx(t), "main", "", first); err != nil {
			t.Fatalf("push to a server that refuses a streamed one: %v", err)
		}
		second := mustCommit(t, r, first, Change{Path: "b.yaml", Content: []byte("b: 1\n")})
		if err := r.Push(testCtx(t), "main", first, second); err != nil {
			t.Fatal(err)
		}
		if tip, _ := g.BranchTip("app.git", "main"); tip != second {
			t.Fatalf("remote tip %s, want %s", tip, second)
		}
		if n := front.StreamedPushes(); n != 1 {
			t.Fatalf("%d streamed attempts, want 1: a refused form is not tried again", n)
		}
		remoteIsWhole(t, g)
	})
}

// A repository URL with a query (a token some hosts take there) is pushed as go-git pushes
// it: go-git posts to the URL with its query, where a streamed push would post without it.
func TestAURLWithAQueryIsNotStreamed(t *testing.T) {
	for url, streams := range map[string]bool{
		"http://127.0.0.1:1/app.git":                   true,
		"http://127.0.0.1:1/app.git?private_token=tok": false,
	} {
		r, err := Open(t.TempDir(), url, Credentials{})
		if err != nil {
			t.Fatal(err)
		}
		if got := !r.noStreaming; got != streams {
			t.Errorf("%s: streams %t, want %t", url, got, streams)
		}
	}
}

// The post goes where go-git's would: the discovery's path as it was spelled, without its
// query or userinfo; and without the credentials go-git would send, nothing is streamed.
func TestAStreamedPushPostsWhereGoGitWould(t *testing.T) {
	s, err := newHTTPSession(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.receivePackEndpoint(); ok {
		t.Fatal("an endpoint without a discovery")
	}
	discovery, err := http.NewRequest(http.MethodGet, "http://bot@git.example/team%2Fapp.git/info/refs?service=git-receive-pack", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.discovery = discovery
	endpoint, authorization, ok := s.receivePackEndpoint()
	if !ok || endpoint.String() != "http://git.example/team%2Fapp.git/git-receive-pack" || authorization != "" {
		t.Fatalf("endpoint %v, %q, %t; want http://git.example/team%%2Fapp.git/git-receive-pack", endpoint, authorization, ok)
	}
	if err := s.streamPush(testCtx(t), nil, nil, nil); !errors.Is(err, errNotStreamable) {
		t.Fatalf("a discovery without the configured credentials: %v, want it left to go-git", err)
	}
}
