package test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The chart's crds/ is a copy of config/crd (make chart-crds); a change to one without the
// other fails here as well as in make verify-generated.
func TestChartCRDsAreACopyOfConfigCRD(t *testing.T) {
	root := repoRoot(t)
	want, err := filepath.Glob(filepath.Join(root, "config", "crd", "*.yaml"))
	if err != nil || len(want) == 0 {
		t.Fatalf("no CRDs under config/crd: %v", err)
	}
	got, err := filepath.Glob(filepath.Join(root, "charts", "gitops-reverser", "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("chart has %d CRD files, config/crd %d: run make chart-crds", len(got), len(want))
	}
	for _, src := range want {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, "charts", "gitops-reverser", "crds", filepath.Base(src)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("charts/gitops-reverser/crds/%s differs from config/crd: run make chart-crds (%v)", filepath.Base(src), err)
		}
	}
}

// repoRoot is the module root: two folders up from this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from the test's folder: %v", err)
	}
	return root
}
