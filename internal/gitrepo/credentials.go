package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v6/plumbing/client"
	"github.com/go-git/go-git/v6/plumbing/transport"
	githttp "github.com/go-git/go-git/v6/plumbing/transport/http"
	"github.com/go-git/go-git/v6/plumbing/transport/ssh/knownhosts"
	gossh "golang.org/x/crypto/ssh"
)

// Credentials authenticate against the remote. They are read from the GitProvider's Secret
// and never printed: String and GoString hide them, and no error carries them.
type Credentials struct {
	Username, Password string
	BearerToken        string
	SSHPrivateKey      []byte
	KnownHosts         []byte
	// CABundle (PEM) verifies an https:// server whose certificate a private CA signs.
	CABundle []byte
	// PlainHTTP allows username/password or a token over http:// to a host that is not a
	// loopback address (GitProvider spec.insecure).
	PlainHTTP bool
}

// String hides the credentials from any log line that prints them by mistake.
func (Credentials) String() string { return "Credentials{redacted}" }

// GoString hides the credentials from %#v.
func (Credentials) GoString() string { return "Credentials{redacted}" }

// ErrInsecureTransport is wrapped by the refusal of a URL whose transport would expose
// the credentials or the operator's own files (plain http:// to another host, file://).
var ErrInsecureTransport = errors.New("insecure transport")

// ErrUnknownHostKey is returned when an SSH server's host key is not in known_hosts.
var ErrUnknownHostKey = errors.New("the server's SSH host key is not in known_hosts, or differs from it")

// clientOptions turns credentials into go-git client options for a URL's scheme.
// knownHostsDir holds the known_hosts file that SSH host key checks read.
// For http(s) it also returns the repository's HTTP session, which go-git's requests go
// through and a streamed push posts with (push_stream.go).
func clientOptions(u *url.URL, creds Credentials, knownHostsDir string) ([]client.Option, *httpSession, error) {
	switch u.Scheme {
	case "file":
		return nil, nil, fmt.Errorf("%w: file:// repositories are not supported: they would reach the operator's own files, other targets' local copies included", ErrInsecureTransport)
	case "ssh":
		auth, err := newSSHAuth(creds, knownHostsDir)
		if err != nil {
			return nil, nil, err
		}
		return []client.Option{client.WithSSHAuth(auth)}, nil, nil
	case "http", "https":
		_, urlPassword := u.User.Password()
		secret := creds.Username != "" || creds.Password != "" || creds.BearerToken != "" || urlPassword
		if u.Scheme == "http" && secret && !creds.PlainHTTP && !loopbackHost(u.Hostname()) {
			return nil, nil, fmt.Errorf("%w: credentials would cross the network in clear text to http://%s: use https://, or set spec.insecure: true on the GitProvider to accept that", ErrInsecureTransport, u.Host)
		}
		session, err := newHTTPSession(creds.CABundle, secret)
		if err != nil {
			return nil, nil, err
		}
		opts := []client.Option{client.WithHTTPClient(session.client)}
		switch {
		case creds.Username != "" || creds.Password != "":
			opts = append(opts, client.WithHTTPAuth(&githttp.BasicAuth{Username: creds.Username, Password: creds.Password}))
		case creds.BearerToken != "":
			opts = append(opts, client.WithHTTPAuth(&githttp.TokenAuth{Token: creds.BearerToken}))
		}
		return opts, session, nil
	default:
		return nil, nil, fmt.Errorf("repository URL scheme %q is not supported: use https://, http:// or ssh://", u.Scheme)
	}
}

// loopbackHost reports a host that does not leave the machine: localhost or a loopback IP.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sshAuth logs in with a private key and accepts only host keys listed in known_hosts:
// without known_hosts it fails closed.
type sshAuth struct {
	signer   gossh.Signer
	hostKeys *knownhosts.HostKeyDB
}

func newSSHAuth(creds Credentials, dir string) (*sshAuth, error) {
	if len(creds.SSHPrivateKey) == 0 {
		return nil, errors.New("an ssh:// repository needs ssh-privatekey in the credentials Secret")
	}
	if len(creds.KnownHosts) == 0 {
		return nil, errors.New("an ssh:// repository needs known_hosts in the credentials Secret; host keys are never trusted blindly")
	}
	signer, err := gossh.ParsePrivateKey(creds.SSHPrivateKey)
	if err != nil {
		// The parser's message does not include key material.
		return nil, fmt.Errorf("ssh-privatekey is not a usable private key: %w", err)
	}
	file := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(file, creds.KnownHosts, 0o600); err != nil {
		return nil, fmt.Errorf("write known_hosts: %w", err)
	}
	hostKeys, err := knownhosts.NewDB(file)
	if err != nil {
		return nil, fmt.Errorf("known_hosts is not valid: %w", err)
	}
	return &sshAuth{signer: signer, hostKeys: hostKeys}, nil
}

// ClientConfig implements go-git's SSH authentication.
func (a *sshAuth) ClientConfig(_ context.Context, req *transport.Request) (*gossh.ClientConfig, error) {
	user := "git"
	if req != nil && req.URL != nil && req.URL.User != nil && req.URL.User.Username() != "" {
		user = req.URL.User.Username()
	}
	check := a.hostKeys.HostKeyCallback()
	cfg := &gossh.ClientConfig{
		User: user,
		Auth: []gossh.AuthMethod{gossh.PublicKeys(a.signer)},
		HostKeyCallback: func(host string, remote net.Addr, key gossh.PublicKey) error {
			if err := check(host, remote, key); err != nil {
				return fmt.Errorf("%w (host %s)", ErrUnknownHostKey, host)
			}
			return nil
		},
	}
	if req != nil && req.URL != nil {
		// Offer only the key types known_hosts lists for this host, so that a host with
		// several keys negotiates one we can verify.
		cfg.HostKeyAlgorithms = a.hostKeys.HostKeyAlgorithms(hostWithPort(req.URL.Host))
	}
	return cfg, nil
}

func hostWithPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(host, "22")
}
