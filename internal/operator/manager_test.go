package operator

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAKubeconfigFlagIsNotThrottledMoreThanInCluster(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: "t"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RestConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 {
		t.Fatalf("QPS %v: client-go's default throttling (5/s) applies to --kubeconfig", cfg.QPS)
	}
}
