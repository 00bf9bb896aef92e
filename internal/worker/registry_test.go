package worker

import (
	"context"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func TestOneWorkerPerNormalizedRepositoryBranch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := NewRegistry(ctx, t.TempDir())
	key, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	creds := gitrepo.Credentials{SSHPrivateKey: key.PrivateKeyPEM, KnownHosts: []byte("git.example.com " + string(marshalAuthorizedKey(key)))}
	ensure := func(url, branch string) *Worker {
		t.Helper()
		w, _, _, err := reg.Ensure(Config{URL: url, Branch: branch, AllowedBranches: []string{"**"}, Credentials: creds})
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

func TestChangedCredentialsReplaceTheWorkerAfterItStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := NewRegistry(ctx, t.TempDir())
	cfg := Config{URL: "https://git.example.com/team/app.git", Branch: "main", AllowedBranches: []string{"main"},
		Credentials: gitrepo.Credentials{Username: "bot", Password: "old"}, RetryMax: 50 * time.Millisecond}
	first, key, replaced, err := reg.Ensure(cfg)
	if err != nil || replaced {
		t.Fatalf("first Ensure: replaced=%v err=%v", replaced, err)
	}
	same, _, replaced, err := reg.Ensure(cfg)
	if err != nil || replaced || same != first {
		t.Fatalf("an unchanged configuration replaced the worker (replaced=%v err=%v)", replaced, err)
	}
	cfg.Credentials.Password = "rotated"
	second, _, replaced, err := reg.Ensure(cfg)
	if err != nil || !replaced || second == first {
		t.Fatalf("a rotated password kept the old worker (replaced=%v err=%v)", replaced, err)
	}
	select {
	case <-first.Done():
	default:
		t.Fatal("the replaced worker is still running")
	}
	if w, ok := reg.Lookup(key); !ok || w != second {
		t.Fatal("Lookup does not return the new worker")
	}
	reg.Release(key)
	if _, ok := reg.Lookup(key); ok || reg.Len() != 0 {
		t.Fatal("Release left the worker registered")
	}
	<-second.Done()
}

func TestStopAllWaitsForEveryWorker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := NewRegistry(ctx, t.TempDir())
	var workers []*Worker
	for _, branch := range []string{"main", "release"} {
		w, _, _, err := reg.Ensure(Config{URL: "https://git.example.com/team/app.git", Branch: branch, AllowedBranches: []string{"*"},
			Credentials: gitrepo.Credentials{Username: "bot", Password: "pw"}, RetryMax: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		workers = append(workers, w)
	}
	reg.StopAll()
	for _, w := range workers {
		select {
		case <-w.Done():
		default:
			t.Fatal("StopAll returned while a worker still runs")
		}
	}
	if reg.Len() != 0 {
		t.Fatalf("%d workers left", reg.Len())
	}
}
