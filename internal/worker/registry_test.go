package worker

import (
	"context"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func TestOneWorkerPerNormalizedRepositoryBranch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := NewRegistry(ctx, t.TempDir())
	ensure := func(url, branch string) *Worker {
		t.Helper()
		key, err := testenv.NewSSHKey()
		if err != nil {
			t.Fatal(err)
		}
		creds := gitrepo.Credentials{SSHPrivateKey: key.PrivateKeyPEM, KnownHosts: []byte("git.example.com " + string(marshalAuthorizedKey(key)))}
		w, _, err := reg.Ensure(Config{URL: url, Branch: branch, AllowedBranches: []string{"**"}, Credentials: creds})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	a := ensure("https://Git.Example.com:443/team/app.git", "main")
	b := ensure("https://git.example.com/team/app/", "main")
	if a != b {
		t.Fatal("two spellings of one repository branch got two workers")
	}
	if ensure("ssh://git@git.example.com/team/app.git", "main") == a {
		t.Fatal("https and ssh spellings must stay distinct keys")
	}
	if ensure("https://git.example.com/team/app.git", "release") == a {
		t.Fatal("another branch shared the worker")
	}
	if reg.Len() != 3 {
		t.Fatalf("registry holds %d workers, want 3", reg.Len())
	}
}
