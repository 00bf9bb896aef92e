package testenv

import (
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
	kustomizeOut  []byte
)

// KustomizeCLI returns the path of the real kustomize command-line tool, built once per test
// process into a temporary folder. The first caller pays for the build (its time is logged);
// a failed build fails every caller. The folder is left for the operating system's temporary
// files: it is shared by all the tests of the process, and no single test owns it.
func KustomizeCLI(t testing.TB) string {
	t.Helper()
	kustomizeOnce.Do(func() {
		var dir string
		dir, kustomizeErr = os.MkdirTemp("", "kustomize-cli-")
		if kustomizeErr != nil {
			return
		}
		root, err := RepoRoot()
		if err != nil {
			kustomizeErr = err
			return
		}
		kustomizeBin = filepath.Join(dir, "kustomize")
		start := time.Now()
		cmd := exec.Command("go", "build", "-o", kustomizeBin, kustomizeModule)
		cmd.Dir = root
		kustomizeOut, kustomizeErr = cmd.CombinedOutput()
		t.Logf("built the kustomize CLI in %s", time.Since(start).Round(time.Millisecond))
	})
	if kustomizeErr != nil {
		t.Fatalf("building the kustomize CLI: %v\n%s", kustomizeErr, kustomizeOut)
	}
	return kustomizeBin
}
