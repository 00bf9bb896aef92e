//go:build e2e && linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAFreshCloneBuildsAndFindsItsControlPlane holds the repository to needing nothing beside
// a clone of itself (docs/testing.md#the-control-plane): the committed tree is cloned into an
// empty temporary folder and `make build` and `make control-plane` run there. When the test
// runs as root, the folder that holds this checkout is hidden behind an empty filesystem in a
// private mount namespace, so a path that reaches beside the checkout (a sibling folder of
// tools or documents) fails instead of quietly working. The control-plane cache may be warm.
func TestAFreshCloneBuildsAndFindsItsControlPlane(t *testing.T) {
	root := gitOutput(t, "", "rev-parse", "--show-toplevel")
	clone := filepath.Join(t.TempDir(), "gitops-reverser")
	gitOutput(t, "", "clone", "--quiet", "--no-hardlinks", root, clone)

	steps := "make --no-print-directory build && ./bin/gitops-reverser version && make --no-print-directory control-plane"
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", steps)
	if hide, ok := hideableParent(t, root, clone); ok {
		t.Logf("hiding %s while the clone builds", hide)
		cmd = exec.Command("unshare", "--mount", "--propagation", "private", "bash", "-euo", "pipefail", "-c",
			`mount -t tmpfs -o size=1m,mode=0755 gitops-reverser-hidden "$1" && cd "$2" && `+steps,
			"hide", hide, clone)
	} else {
		t.Logf("not root or no unshare: the clone builds with %s still visible", filepath.Dir(root))
	}
	cmd.Dir = clone
	cmd.Env = withoutEnv(os.Environ(), "KUBEBUILDER_ASSETS", "GOFLAGS", "GOWORK")
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

// hideableParent returns the folder that holds the checkout when it can be hidden: the test
// runs as root with unshare on PATH, and the folder holds none of what a build legitimately
// reads (the Go toolchain and caches, $HOME's tool cache, the temporary folder of the clone).
func hideableParent(t *testing.T, root, clone string) (string, bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		return "", false
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return "", false
	}
	parent := filepath.Dir(root)
	needed := []string{clone, os.Getenv("HOME")}
	for _, v := range []string{"GOROOT", "GOMODCACHE", "GOCACHE", "GOPATH"} {
		needed = append(needed, goEnv(t, v))
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		needed = append(needed, goBin)
	}
	for _, n := range needed {
		if n != "" && within(n, parent) {
			t.Logf("%s holds %s, which the build needs", parent, n)
			return "", false
		}
	}
	return parent, true
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func gitOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
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
	var kept []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || name == n
		}
		if !drop {
			kept = append(kept, kv)
		}
	}
	return kept
}
