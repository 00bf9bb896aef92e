package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// kustomizeModule is the kustomize command, a `tool` of go.mod: the CLI is built from the
// version go.mod requires, whose api and kyaml modules are the ones the operator links.
const kustomizeModule = "sigs.k8s.io/kustomize/kustomize/v5"

var (
	kustomizeOnce sync.Once
	kustomizeBin  string
	kustomizeErr  error
)

// KustomizeCLI returns the path of the real kustomize command-line tool, built once per test
// process. The first caller pays for the build (its time is logged); a failed build fails
// every caller.
//
// No test owns the binary (every test of the process shares it), so nothing removes it.
// Instead it is named after its content in one folder of the temporary directory: the
// builds of later processes, being the same bytes, land on the same file, and the folder
// holds one binary per kustomize version rather than one per test run.
func KustomizeCLI(t testing.TB) string {
	t.Helper()
	kustomizeOnce.Do(func() {
		start := time.Now()
		kustomizeBin, kustomizeErr = buildKustomize()
		t.Logf("built the kustomize CLI in %s", time.Since(start).Round(time.Millisecond))
	})
	if kustomizeErr != nil {
		t.Fatalf("building the kustomize CLI: %v", kustomizeErr)
	}
	return kustomizeBin
}

func buildKustomize() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "gitops-reverser-kustomize-cli")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // a no-op once renamed
	cmd := exec.Command("go", "build", "-o", tmp.Name(), kustomizeModule)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", kustomizeModule, err, out)
	}
	sum, err := fileDigest(tmp.Name())
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kustomize-"+sum)
	// Renaming onto a file of the same content is harmless even while another process
	// runs it.
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", err
	}
	return bin, nil
}

func fileDigest(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
