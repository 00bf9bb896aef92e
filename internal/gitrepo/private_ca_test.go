package gitrepo

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A Git server whose certificate a private CA signs is reached with that CA from the
// credentials Secret's ca.crt (Credentials.CABundle), and refused without it: nothing turns
// verification off (docs/security.md#git-transport).
func TestAPrivateCAFromTheSecretVerifiesTheGitServer(t *testing.T) {
	ca := testenv.NewCA(t, "private-git-ca")
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo("app.git"); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTPS(t, testenv.HTTPAuth{Username: "bot", Password: "pw"}, ca)
	if _, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: map[string]string{"a.yaml": "a: 1\n"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(front.URL("app.git"), "https://") {
		t.Fatalf("front end at %s, want https", front.URL("app.git"))
	}

	without, err := Open(t.TempDir(), front.URL("app.git"), Credentials{Username: "bot", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := without.Fetch(testCtx(t), "main"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("fetch without the CA = %v, want a certificate error", err)
	}

	with, err := Open(t.TempDir(), front.URL("app.git"), Credentials{Username: "bot", Password: "pw", CABundle: ca.PEM})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := with.Fetch(testCtx(t), "main")
	if err != nil || tip == "" {
		t.Fatalf("fetch with the private CA = %q, %v", tip, err)
	}
	sha := mustCommit(t, with, tip, Change{Path: "b.yaml", Content: []byte("b: 1\n")})
	if err := with.Push(testCtx(t), "main", tip, sha); err != nil {
		t.Fatalf("push with the private CA: %v", err)
	}
}
