package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// The signature is checked by the real `git verify-commit` with gpg.format=ssh.
func TestSignedCommitVerifiesWithGit(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is needed by git to verify SSH signatures")
	}
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	key, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := NewCommitSigner(key.PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(t.TempDir(), front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	spec := commitSpec("signed")
	spec.Signer = signer
	sha, err := r.Commit("", []Change{{Path: "a.yaml", Content: []byte("a: 1\n")}}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(testCtx(t), "main", "", sha); err != nil {
		t.Fatal(err)
	}

	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, []byte("bot@example.com "+signer.PublicKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	verify := func(allowedFile string) (string, error) {
		cmd := exec.Command("git", "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+allowedFile, "verify-commit", sha)
		cmd.Dir = filepath.Join(g.Root(), "app.git")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := verify(allowed); err != nil || !strings.Contains(out, "Good") {
		t.Fatalf("git verify-commit: %v\n%s", err, out)
	}
	other, _ := testenv.NewSSHKey()
	otherSigner, _ := NewCommitSigner(other.PrivateKeyPEM)
	wrong := filepath.Join(t.TempDir(), "allowed_signers")
	_ = os.WriteFile(wrong, []byte("bot@example.com "+otherSigner.PublicKey()+"\n"), 0o600)
	if out, err := verify(wrong); err == nil {
		t.Fatalf("the signature verified against another key:\n%s", out)
	}
}
