package testenv

import (
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
)

// The types of the servers, under the names the tests use.
type (
	// ControlPlane is a running kube-apiserver and etcd with the project's CRDs installed.
	ControlPlane = servers.ControlPlane
	// ControlPlaneOption changes how the control plane is started.
	ControlPlaneOption = servers.ControlPlaneOption
	// HTTPAuth is what the HTTP front end demands.
	HTTPAuth = servers.HTTPAuth
	// HTTPFrontend serves a GitServer's repositories over smart HTTP.
	HTTPFrontend = servers.HTTPFrontend
	// SSHFrontend serves a GitServer's repositories over SSH.
	SSHFrontend = servers.SSHFrontend
	// SSHKey is a key pair in the forms Git clients and Secrets use.
	SSHKey = servers.SSHKey
	// Commit is one commit of a repository's history.
	Commit = servers.Commit
	// ForeignChange is a commit made by someone other than the operator.
	ForeignChange = servers.ForeignChange
)

// WithAPIServerFlag passes an extra flag to kube-apiserver.
func WithAPIServerFlag(name, value string) ControlPlaneOption {
	return servers.WithAPIServerFlag(name, value)
}

// StartControlPlane starts a control plane that the caller stops with Stop (for a control
// plane shared by the tests of a package, started in TestMain).
func StartControlPlane(opts ...ControlPlaneOption) (*ControlPlane, error) {
	return servers.StartControlPlane(opts...)
}

// NewControlPlane starts a control plane for one test and stops it when the test ends.
func NewControlPlane(t testing.TB, opts ...ControlPlaneOption) *ControlPlane {
	t.Helper()
	cp, err := servers.StartControlPlane(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return cp
}

// NewSSHKey generates an ed25519 key pair.
func NewSSHKey() (*SSHKey, error) { return servers.NewSSHKey() }

// RepoRoot returns the root of this Go module (the folder holding go.mod).
func RepoRoot() (string, error) { return servers.RepoRoot() }

// GitServer is a servers.GitServer whose front ends stop when the test ends.
type GitServer struct {
	*servers.GitServer
}

// NewGitServer returns a Git server whose repositories live in a temporary folder removed
// when the test ends.
func NewGitServer(t testing.TB) *GitServer {
	t.Helper()
	return &GitServer{servers.NewGitServer(t.TempDir())}
}

// ServeHTTP starts a smart HTTP front end on a loopback port, stopped when the test ends.
func (g *GitServer) ServeHTTP(t testing.TB, auth HTTPAuth) *HTTPFrontend {
	t.Helper()
	f, err := g.StartHTTP(auth)
	return stopAtEnd(t, f, err)
}

// ServeHTTPS is ServeHTTP over TLS, with a server certificate for 127.0.0.1 that ca signs.
func (g *GitServer) ServeHTTPS(t testing.TB, auth HTTPAuth, ca *CA) *HTTPFrontend {
	t.Helper()
	cert, key := ca.Issue(t, "git.example", true)
	f, err := g.StartHTTPS(auth, cert, key)
	return stopAtEnd(t, f, err)
}

func stopAtEnd(t testing.TB, f *HTTPFrontend, err error) *HTTPFrontend {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}

// ServeSSH starts an SSH front end on a loopback port that admits the given client keys,
// stopped when the test ends.
func (g *GitServer) ServeSSH(t testing.TB, clientKeys ...ssh.PublicKey) *SSHFrontend {
	t.Helper()
	f, err := g.StartSSH(clientKeys...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}
