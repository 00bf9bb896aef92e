package worker

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func TestCommitsAreSignedAndTheKeyIsPublished(t *testing.T) {
	key, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(c *Config) { c.SigningKey = key.PrivateKeyPEM })
	r.submit(upsert("alice", "team-a", "cfg", "1"))
	st := r.settled()
	if want := strings.TrimSpace(string(marshalAuthorizedKey(key))); st.SigningPublicKey != want {
		t.Fatalf("published signing key = %q, want %q", st.SigningPublicKey, want)
	}
	tip, _ := r.server.BranchTip(repoName, "main")
	out, err := exec.Command("git", "--git-dir", filepath.Join(r.server.Root(), repoName), "cat-file", "commit", tip).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "gpgsig -----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("the pushed commit is not signed:\n%s", out)
	}
}
