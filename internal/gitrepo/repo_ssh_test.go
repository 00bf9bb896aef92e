package gitrepo

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func sshServer(t *testing.T) (*testenv.GitServer, *testenv.SSHFrontend, *testenv.SSHKey) {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo("app.git"); err != nil {
		t.Fatal(err)
	}
	key, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	return g, g.ServeSSH(t, key.Public), key
}

func TestSSHFetchAndPushWithKnownHosts(t *testing.T) {
	g, front, key := sshServer(t)
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{SSHPrivateKey: key.PrivateKeyPEM, KnownHosts: front.KnownHosts()})
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.Fetch(testCtx(t), "main")
	if err != nil {
		t.Fatal(err)
	}
	sha := mustCommit(t, r, base, Change{Path: "x.yaml", Content: []byte("x\n")})
	if err := r.Push(testCtx(t), "main", base, sha); err != nil {
		t.Fatal(err)
	}
	if tip, _ := g.BranchTip("app.git", "main"); tip != sha {
		t.Fatalf("remote tip %s, want %s", tip, sha)
	}
}

func TestSSHFailsClosedOnUnknownHostKey(t *testing.T) {
	_, front, key := sshServer(t)
	other, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	// known_hosts names this host with another key: the real host key is unknown.
	host := strings.Fields(string(front.KnownHosts()))[0]
	wrongHosts := host + " " + string(ssh.MarshalAuthorizedKey(other.Public))
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{SSHPrivateKey: key.PrivateKeyPEM, KnownHosts: []byte(wrongHosts)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Fetch(testCtx(t), "main")
	if !errors.Is(err, ErrUnknownHostKey) {
		t.Fatalf("fetch from a host with an unknown key = %v, want ErrUnknownHostKey", err)
	}
	var remoteErr *RemoteError
	if !errors.As(err, &remoteErr) || !remoteErr.Permanent() {
		t.Fatalf("an unknown host key should be a permanent error, got %v", err)
	}
}

func TestSSHWithoutKnownHostsIsRefused(t *testing.T) {
	_, front, key := sshServer(t)
	_, err := Open(t.TempDir(), front.URL("app.git"), Credentials{SSHPrivateKey: key.PrivateKeyPEM})
	if err == nil || !strings.Contains(err.Error(), "known_hosts") {
		t.Fatalf("Open without known_hosts = %v, want a refusal naming known_hosts", err)
	}
}

func TestSSHUnknownClientKeyIsPermanent(t *testing.T) {
	_, front, _ := sshServer(t)
	stranger, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{SSHPrivateKey: stranger.PrivateKeyPEM, KnownHosts: front.KnownHosts()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Fetch(testCtx(t), "main")
	var remoteErr *RemoteError
	if !errors.As(err, &remoteErr) || !remoteErr.Permanent() {
		t.Fatalf("fetch with an unauthorized key = %v, want a permanent RemoteError", err)
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Fatal("the error contains key material")
	}
}
