package servers

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// SSHKey is a key pair in the forms Git clients and Secrets use.
type SSHKey struct {
	// PrivateKeyPEM is the OpenSSH private key, as stored under ssh-privatekey.
	PrivateKeyPEM []byte
	// Public is the public key.
	Public ssh.PublicKey
	// Signer signs with the private key.
	Signer ssh.Signer
}

// NewSSHKey generates an ed25519 key pair.
func NewSSHKey() (*SSHKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ssh key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, fmt.Errorf("encode ssh key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("ssh signer: %w", err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("ssh public key: %w", err)
	}
	return &SSHKey{PrivateKeyPEM: pem.EncodeToMemory(block), Public: sshPub, Signer: signer}, nil
}

// SSHFrontend serves a GitServer's repositories over SSH: public key authentication, then
// git-upload-pack or git-receive-pack on the requested repository.
type SSHFrontend struct {
	server  *GitServer
	hostKey *SSHKey
	addr    string
	ln      net.Listener
	conns   sync.WaitGroup

	mu         sync.Mutex
	authorized [][]byte // marshaled public keys allowed to log in
}

// StartSSH starts an SSH front end on a loopback port that admits the given client keys.
// Stop it with Close.
func (g *GitServer) StartSSH(clientKeys ...ssh.PublicKey) (*SSHFrontend, error) {
	hostKey, err := NewSSHKey()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("git ssh front end: %w", err)
	}
	f := &SSHFrontend{server: g, hostKey: hostKey, addr: ln.Addr().String(), ln: ln}
	for _, k := range clientKeys {
		f.Authorize(k)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: f.checkKey}
	cfg.AddHostKey(hostKey.Signer)
	f.conns.Add(1) // the accept loop
	go func() {
		defer f.conns.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			go func() {
				defer f.conns.Done()
				f.serveConn(conn, cfg)
			}()
		}
	}()
	return f, nil
}

// Close stops accepting connections and waits for the open ones to finish.
func (f *SSHFrontend) Close() error {
	err := f.ln.Close()
	f.conns.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("git ssh front end: %w", err)
	}
	return nil
}

// Authorize admits another client key.
func (f *SSHFrontend) Authorize(key ssh.PublicKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.authorized = append(f.authorized, key.Marshal())
}

// URL returns the ssh:// clone URL of a repository.
func (f *SSHFrontend) URL(repo string) string {
	return "ssh://git@" + f.addr + "/" + strings.TrimPrefix(repo, "/")
}

// KnownHosts returns a known_hosts line for this server's host key.
func (f *SSHFrontend) KnownHosts() []byte {
	host, port, _ := net.SplitHostPort(f.addr)
	return []byte(fmt.Sprintf("[%s]:%s %s", host, port, ssh.MarshalAuthorizedKey(f.hostKey.Public)))
}

// HostKey is the server's public host key.
func (f *SSHFrontend) HostKey() ssh.PublicKey { return f.hostKey.Public }

func (f *SSHFrontend) checkKey(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.authorized {
		if bytes.Equal(k, key.Marshal()) {
			return &ssh.Permissions{}, nil
		}
	}
	return nil, errors.New("unknown public key")
}

func (f *SSHFrontend) serveConn(conn net.Conn, cfg *ssh.ServerConfig) {
	defer conn.Close()
	sconn, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	defer sconn.Close()
	go ssh.DiscardRequests(reqs)
	for newCh := range chans {
		if newCh.ChannelType() != "session" {
			_ = newCh.Reject(ssh.UnknownChannelType, "only sessions are served")
			continue
		}
		ch, chReqs, err := newCh.Accept()
		if err != nil {
			continue
		}
		go f.serveSession(ch, chReqs)
	}
}

// serveSession answers env requests (GIT_PROTOCOL) and one exec request running a Git
// service on a repository of the server.
func (f *SSHFrontend) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var env []string
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			if ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL" {
				env = append(env, "GIT_PROTOCOL="+kv.Value)
			}
			_ = req.Reply(true, nil)
		case "exec":
			var cmd struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &cmd); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			status := f.runService(ch, cmd.Command, env)
			_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, status))
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

func (f *SSHFrontend) runService(ch ssh.Channel, command string, env []string) uint32 {
	service, repo, err := parseGitCommand(command)
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "%v\n", err)
		return 1
	}
	dir, err := f.server.repoDir(repo)
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "%v\n", err)
		return 1
	}
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(ch.Stderr(), "repository %s not found\n", repo)
		return 1
	}
	if service == "receive-pack" {
		f.server.countPush(repo)
	}
	cmd := gitCommand("", service, dir)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return uint32(exit.ExitCode())
		}
		fmt.Fprintf(ch.Stderr(), "%v\n", err)
		return 1
	}
	return 0
}

// parseGitCommand reads "git-upload-pack '/repo.git'" (or "git upload-pack ...") into the
// service and the repository name.
func parseGitCommand(command string) (service, repo string, err error) {
	fields := strings.Fields(command)
	if len(fields) == 3 && fields[0] == "git" {
		fields = []string{"git-" + fields[1], fields[2]}
	}
	if len(fields) != 2 {
		return "", "", fmt.Errorf("unsupported command %q", command)
	}
	switch fields[0] {
	case "git-upload-pack", "git-receive-pack", "git-upload-archive":
	default:
		return "", "", fmt.Errorf("unsupported command %q", fields[0])
	}
	repo = strings.Trim(fields[1], `'"`)
	return strings.TrimPrefix(fields[0], "git-"), strings.TrimPrefix(repo, "/"), nil
}
