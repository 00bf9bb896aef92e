package kustomize

import (
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/bounds"
)

// boundedFiles reads like the branch worker's reader: every file is alias-bounded before
// kustomize sees it (docs/security.md#bounded-reading).
type boundedFiles MapFiles

func (b boundedFiles) ReadFile(p string) ([]byte, bool, error) {
	content, ok, _ := MapFiles(b).ReadFile(p)
	if !ok {
		return nil, false, nil
	}
	if err := bounds.CheckYAML(p, content); err != nil {
		return nil, false, err
	}
	return content, true, nil
}

// The kustomization loader and render meet whatever a repository holds: a kustomization,
// the resource it lists and a patch, all from the fuzzer. Load must return (a folder or an
// error) without panicking, and what it renders must take a source form and a delete.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("resources:\n- cm.yaml\n"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"), []byte(""))
	f.Add([]byte("namespace: team\nnamePrefix: p-\ncommonLabels:\n  app: x\nresources:\n- cm.yaml\npatches:\n- path: patch.yaml\n"),
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"),
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n"))
	f.Add([]byte("resources:\n- ../outside\n- cm.yaml\nconfigMapGenerator:\n- name: gen\n  literals: [a=b]\n"), []byte("a: &a [x]\nb: [*a, *a]\n"), []byte("- op: add\n  path: /x\n  value: 1\n"))
	f.Add([]byte("resources: [cm.yaml]\nreplicas:\n- name: d\n  count: 3\nimages:\n- name: nginx\n  newTag: \"1\"\n"), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 1\n"), []byte(""))
	f.Fuzz(func(t *testing.T, kustomization, resource, patch []byte) {
		files := boundedFiles{
			"live/kustomization.yaml": kustomization,
			"live/cm.yaml":            resource,
			"live/patch.yaml":         patch,
		}
		folder, err := Load(files, "live", []string{"kustomization.yaml", "cm.yaml", "patch.yaml"})
		if err != nil || folder == nil {
			return
		}
		for _, obj := range folder.Objects() {
			_, _ = folder.SourceForm(obj.ID, resource)
			_, _ = folder.Delete(obj.ID)
		}
	})
}
