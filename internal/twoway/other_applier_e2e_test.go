//go:build e2e

package twoway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E11: an object another Flux Kustomization applies into the namespace the target mirrors
// is neither mirrored into the target's folder nor adopted by its applier.
func TestAnotherAppliersObjectIsNeitherMirroredNorAdopted(t *testing.T) {
	l := newLoop(t)
	if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{
		"other/theirs.yaml": configMapDoc(l.ns, "theirs", "1")}}); err != nil {
		t.Fatal(err)
	}
	other := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "other", "namespace": testenv.FluxNamespace},
		"spec": map[string]any{"interval": "1h", "path": "./other", "prune": true,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": "apps"}},
	}}
	other.SetGroupVersionKind(applier.KustomizationGVK)
	// Flux fetches the branch with the push when the operator's first apply asks it to.
	waitFor(t, "the target's catch-up", func() bool { return l.applyStatus().Applied != "" })
	l.create(other)
	waitFor(t, "the other Kustomization's object on the cluster", func() bool { return l.live("theirs") == "1" })

	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "ours"}, Data: map[string]string{"v": "1"}})
	waitFor(t, "our ConfigMap in Git", func() bool { return l.inGit(l.folder+"ours.yaml") != "" })
	waitFor(t, "our ConfigMap adopted", func() bool { return l.adopted("ours") })
	if l.inGit(l.folder+"theirs.yaml") != "" {
		t.Fatal("another Kustomization's object was mirrored into the target's folder")
	}
	var theirs corev1.ConfigMap
	if err := l.cp.Client.Get(l.ctx(), keyOf(l.ns, "theirs"), &theirs); err != nil {
		t.Fatal(err)
	}
	if got := theirs.Labels["kustomize.toolkit.fluxcd.io/name"]; got != "other" {
		t.Fatalf("the other Kustomization's object is applied by %q", got)
	}
}
