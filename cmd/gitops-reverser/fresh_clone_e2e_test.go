//go:build e2e && linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// TestAFreshCloneBuildsAndFindsItsControlPlane holds the repository to needing nothing beside
// a clone of itself (docs/testing.md#the-control-plane): the committed tree is cloned into an
// empty temporary folder and `make build` and `make control-plane` run there. When the test
// runs as root, this checkout and everything beside it are hidden behind empty filesystems
// in a private mount namespace, so a path that reaches the checkout or a sibling folder of
// tools or documents fails instead of quietly working. The control-plane cache may be warm.
func TestAFreshCloneBuildsAndFindsItsControlPlane(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "gitops-reverser")
	if _, err := servers.GitOutput(servers.GitCommand("", nil, "clone", "--quiet", "--no-hardlinks", root, clone)); err != nil {
		t.Fatal(err)
	}

	steps := "make --no-print-directory build && ./bin/gitops-reverser version && make --no-print-directory control-plane"
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", steps)
	if hidden := hideable(t, root, clone); len(hidden) > 0 {
		t.Logf("hiding %q while the clone builds", hidden)
		// An entry may vanish meanwhile (the temporary folder of a test running beside this
		// one): only an entry that is still there must be hidden.
		script := `for p in "$@"; do
  if [ -d "$p" ]; then mount -t tmpfs -o size=1m,mode=0755 gitops-reverser-hidden "$p" || [ ! -e "$p" ]
  elif [ -e "$p" ]; then mount --bind /dev/null "$p" || [ ! -e "$p" ]; fi
done
cd "$CLONE" && ` + steps
		cmd = exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "bash", "-euo", "pipefail", "-c", script, "hide"}, hidden...)...)
	} else if os.Getenv("CI") != "" {
		t.Fatalf("in CI the checkout must be hidden while the clone builds: run as root with unshare on PATH")
	} else {
		t.Logf("not root or no unshare: the clone builds with %s still visible", filepath.Dir(root))
	}
	cmd.Dir = clone
	cmd.Env = append(withoutEnv(os.Environ(), "KUBEBUILDER_ASSETS", "GOFLAGS", "GOWORK"), "CLONE="+clone)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in a fresh clone, make build && make control-plane: %v\n%s", err, out)
	}

	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	assets := lines[len(lines)-1]
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if info, err := os.Stat(filepath.Join(assets, bin)); err != nil || info.Mode()&0o111 == 0 {
			t.Errorf("make control-plane printed %q, which holds no runnable %s (%v)\n%s", assets, bin, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(clone, "bin", "gitops-reverser")); err != nil {
		t.Errorf("make build left no bin/gitops-reverser in the clone: %v", err)
	}
}

// hideable returns this checkout and the entries beside it that can be hidden: the test runs
// as root with unshare on PATH, and an entry holds none of what a build legitimately reads
// (the Go toolchain and caches, $HOME with the tool cache, the clone's temporary folder).
func hideable(t *testing.T, root, clone string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil
	}
	needed := []string{clone, os.Getenv("HOME")}
	for _, v := range []string{"GOROOT", "GOMODCACHE", "GOCACHE", "GOPATH"} {
		needed = append(needed, goEnv(t, v))
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		needed = append(needed, goBin)
	}
	entries, err := os.ReadDir(filepath.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	var hidden []string
	for _, e := range entries {
		p := filepath.Join(filepath.Dir(root), e.Name())
		if e.Type()&os.ModeSymlink != 0 || holdsAny(p, needed) {
			continue
		}
		hidden = append(hidden, p)
	}
	return hidden
}

// holdsAny reports whether any of paths lies in dir (or is dir).
func holdsAny(dir string, paths []string) bool {
	for _, n := range paths {
		if n != "" && within(n, dir) {
			return true
		}
	}
	return false
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func withoutEnv(env []string, names ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, name)
	})
}
