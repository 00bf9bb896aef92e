package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// client runs the git command line as a user of the server would.
type gitClient struct {
	t   *testing.T
	env []string
}

func newClient(t *testing.T, extraEnv ...string) *gitClient {
	return &gitClient{t: t, env: append([]string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Client", "GIT_AUTHOR_EMAIL=client@example.com",
		"GIT_COMMITTER_NAME=Client", "GIT_COMMITTER_EMAIL=client@example.com",
	}, extraEnv...)}
}

func (c *gitClient) git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *gitClient) mustGit(dir string, args ...string) string {
	c.t.Helper()
	out, err := c.git(dir, args...)
	if err != nil {
		c.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// commitFile writes a file in a clone and commits it.
func (c *gitClient) commitFile(dir, path, content string) string {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.mustGit(dir, "add", path)
	c.mustGit(dir, "commit", "-q", "-m", "edit "+path)
	return strings.TrimSpace(c.mustGit(dir, "rev-parse", "HEAD"))
}

func seededServer(t *testing.T) *GitServer {
	t.Helper()
	g := NewGitServer(t)
	if err := g.CreateRepo("team/app.git"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.PushForeign("team/app.git", "main", ForeignChange{Files: map[string]string{"README.md": "hello\n"}}); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestHTTPBasicAuthCloneAndPush(t *testing.T) {
	g := seededServer(t)
	front := g.ServeHTTP(t, HTTPAuth{Username: "alice", Password: "s3cret"})
	c := newClient(t)
	work := t.TempDir()
	url := strings.Replace(front.URL("team/app.git"), "http://", "http://alice:s3cret@", 1)
	c.mustGit("", "clone", "-q", url, work)
	sha := c.commitFile(work, "a.txt", "a\n")
	c.mustGit(work, "push", "-q", "origin", "main")

	tip, err := g.BranchTip("team/app.git", "main")
	if err != nil || tip != sha {
		t.Fatalf("remote tip = %q (%v), want the pushed commit %s", tip, err, sha)
	}
	content, err := g.ReadFile("team/app.git", "main", "a.txt")
	if err != nil || string(content) != "a\n" {
		t.Fatalf("ReadFile = %q (%v), want the pushed content", content, err)
	}
	if n := g.Pushes("team/app.git"); n != 1 {
		t.Fatalf("push sessions = %d, want 1", n)
	}
}

func TestHTTPRejectsNonFastForwardPush(t *testing.T) {
	g := seededServer(t)
	front := g.ServeHTTP(t, HTTPAuth{})
	c := newClient(t)
	first, second := t.TempDir(), t.TempDir()
	c.mustGit("", "clone", "-q", front.URL("team/app.git"), first)
	c.mustGit("", "clone", "-q", front.URL("team/app.git"), second)
	winner := c.commitFile(first, "a.txt", "first\n")
	c.mustGit(first, "push", "-q", "origin", "main")

	c.commitFile(second, "a.txt", "second\n")
	out, err := c.git(second, "push", "origin", "main")
	if err == nil {
		t.Fatalf("a push that is not a fast-forward was accepted:\n%s", out)
	}
	if !strings.Contains(out, "rejected") {
		t.Fatalf("push failed without saying it was rejected:\n%s", out)
	}
	if tip, _ := g.BranchTip("team/app.git", "main"); tip != winner {
		t.Fatalf("remote tip moved to %s after a rejected push, want %s", tip, winner)
	}
}

func TestHTTPRefusesWrongPassword(t *testing.T) {
	g := seededServer(t)
	front := g.ServeHTTP(t, HTTPAuth{Username: "alice", Password: "s3cret"})
	c := newClient(t)
	url := strings.Replace(front.URL("team/app.git"), "http://", "http://alice:wrong@", 1)
	out, err := c.git("", "clone", "-q", url, t.TempDir())
	if err == nil {
		t.Fatal("clone with a wrong password succeeded")
	}
	if !strings.Contains(out, "Authentication failed") && !strings.Contains(out, "401") {
		t.Fatalf("clone failed for another reason than authentication:\n%s", out)
	}
}

func TestHTTPBearerToken(t *testing.T) {
	g := seededServer(t)
	front := g.ServeHTTP(t, HTTPAuth{BearerToken: "tok-123"})
	c := newClient(t)
	c.mustGit("", "-c", "http.extraHeader=Authorization: Bearer tok-123", "clone", "-q", front.URL("team/app.git"), t.TempDir())
	if out, err := c.git("", "-c", "http.extraHeader=Authorization: Bearer nope", "clone", "-q", front.URL("team/app.git"), t.TempDir()); err == nil {
		t.Fatalf("clone with a wrong bearer token succeeded:\n%s", out)
	}
}

func TestHTTPDownAnswersUnavailable(t *testing.T) {
	g := seededServer(t)
	front := g.ServeHTTP(t, HTTPAuth{})
	c := newClient(t)
	front.SetDown(true)
	if out, err := c.git("", "clone", "-q", front.URL("team/app.git"), t.TempDir()); err == nil {
		t.Fatalf("clone from a server that is down succeeded:\n%s", out)
	}
	front.SetDown(false)
	c.mustGit("", "clone", "-q", front.URL("team/app.git"), t.TempDir())
}

func TestHTTPRefusesEveryNthPushAndNothingOfItLands(t *testing.T) {
	g := seededServer(t)
	front := g.ServeHTTP(t, HTTPAuth{})
	front.RefusePushes(3)
	c := newClient(t)
	work := t.TempDir()
	c.mustGit("", "clone", "-q", front.URL("team/app.git"), work)
	var results []bool
	for i := range 6 {
		sha := c.commitFile(work, "n.txt", strings.Repeat("x", i+1)+"\n")
		out, err := c.git(work, "push", "origin", "main")
		if err != nil && !strings.Contains(out, "500") {
			t.Fatalf("push %d failed for another reason than the refusal:\n%s", i+1, out)
		}
		tip, _ := g.BranchTip("team/app.git", "main")
		if (err == nil) != (tip == sha) {
			t.Fatalf("push %d: error %v but the remote tip is %s (pushed %s)", i+1, err, tip, sha)
		}
		// A refused commit stays in the clone: the next push carries it, as a retry would.
		results = append(results, err == nil)
	}
	if want := []bool{true, true, false, true, true, false}; fmt.Sprint(results) != fmt.Sprint(want) {
		t.Fatalf("pushes accepted = %v, want every third refused: %v", results, want)
	}
	if n := front.RefusedPushes(); n != 2 {
		t.Fatalf("RefusedPushes = %d, want 2", n)
	}
	if n := g.Pushes("team/app.git"); n != 4 {
		t.Fatalf("push sessions = %d, want the 4 that reached Git", n)
	}
	front.RefusePushes(0)
	c.commitFile(work, "n.txt", "last\n")
	c.mustGit(work, "push", "-q", "origin", "main")
}

func TestHTTPAcceptsEveryPasswordOfARotation(t *testing.T) {
	g := seededServer(t)
	front := g.ServeHTTP(t, HTTPAuth{Username: "alice", Password: "first"})
	c := newClient(t)
	cloneWith := func(password string) error {
		url := strings.Replace(front.URL("team/app.git"), "http://", "http://alice:"+password+"@", 1)
		_, err := c.git("", "clone", "-q", url, t.TempDir())
		return err
	}
	if err := cloneWith("first"); err != nil {
		t.Fatalf("the password of HTTPAuth is refused: %v", err)
	}
	front.SetPasswords("second", "first")
	for _, p := range []string{"first", "second"} {
		if err := cloneWith(p); err != nil {
			t.Fatalf("password %q refused during the rotation: %v", p, err)
		}
	}
	front.SetPasswords("third", "second")
	if err := cloneWith("first"); err == nil {
		t.Fatal("a password dropped from the rotation is still accepted")
	}
	if err := cloneWith("third"); err != nil {
		t.Fatalf("the newest password is refused: %v", err)
	}
}

// sshClient returns a git client that logs in with key and trusts only knownHosts.
func sshClient(t *testing.T, key *SSHKey, knownHosts []byte) *gitClient {
	t.Helper()
	dir := t.TempDir()
	keyFile, hostsFile := filepath.Join(dir, "id"), filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(keyFile, key.PrivateKeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostsFile, knownHosts, 0o600); err != nil {
		t.Fatal(err)
	}
	return newClient(t, "GIT_SSH_COMMAND=ssh -F /dev/null -i "+keyFile+" -o IdentitiesOnly=yes -o BatchMode=yes"+
		" -o StrictHostKeyChecking=yes -o UserKnownHostsFile="+hostsFile)
}

func TestSSHCloneAndPush(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client on this machine")
	}
	g := seededServer(t)
	key, err := NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	front := g.ServeSSH(t, key.Public)
	c := sshClient(t, key, front.KnownHosts())
	work := t.TempDir()
	c.mustGit("", "clone", "-q", front.URL("team/app.git"), work)
	sha := c.commitFile(work, "b.txt", "b\n")
	c.mustGit(work, "push", "-q", "origin", "main")
	if tip, _ := g.BranchTip("team/app.git", "main"); tip != sha {
		t.Fatalf("remote tip = %s, want the pushed commit %s", tip, sha)
	}
	if n := g.Pushes("team/app.git"); n != 1 {
		t.Fatalf("push sessions = %d, want 1", n)
	}
}

func TestSSHRefusesUnknownKey(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client on this machine")
	}
	g := seededServer(t)
	known, err := NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	front := g.ServeSSH(t, known.Public)
	out, err := sshClient(t, stranger, front.KnownHosts()).git("", "clone", "-q", front.URL("team/app.git"), t.TempDir())
	if err == nil {
		t.Fatal("clone with an unknown key succeeded")
	}
	if !strings.Contains(out, "Permission denied") {
		t.Fatalf("clone failed for another reason than the key:\n%s", out)
	}
}

func TestForeignPushHistory(t *testing.T) {
	g := seededServer(t)
	before, _ := g.BranchTip("team/app.git", "main")
	after, err := g.PushForeign("team/app.git", "main", ForeignChange{
		Files:   map[string]string{"x/y.yaml": "k: v\n"},
		Delete:  []string{"README.md"},
		Message: "someone else",
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := g.ListFiles("team/app.git", "main")
	if err != nil || strings.Join(files, ",") != "x/y.yaml" {
		t.Fatalf("files = %v (%v), want only x/y.yaml", files, err)
	}
	if ok, err := g.IsAncestor("team/app.git", before, after); err != nil || !ok {
		t.Fatalf("old tip is not an ancestor of the new one (%v)", err)
	}
	if ok, _ := g.IsAncestor("team/app.git", after, before); ok {
		t.Fatal("IsAncestor says the new tip is an ancestor of the old one")
	}
	log, err := g.Log("team/app.git", "main")
	if err != nil || len(log) != 2 || log[0].Subject != "someone else" || log[0].Author != "Foreign User <foreign@example.com>" {
		t.Fatalf("log = %+v (%v)", log, err)
	}
}
