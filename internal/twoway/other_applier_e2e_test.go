//go:build e2e

package twoway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E11: an object another applier object applies into the namespace the target mirrors —
// another Kustomization or Application, of the target's applier or of the other one — is
// neither mirrored into the target's folder nor adopted by the target's applier.
func TestAnotherAppliersObjectIsNeitherMirroredNorAdopted(t *testing.T) {
	for _, target := range appliers {
		for _, other := range appliers {
			t.Run(target.String()+"/other-"+other.String(), func(t *testing.T) {
				testAnotherAppliersObjectIsNeitherMirroredNorAdopted(t, target, other)
			})
		}
	}
}

func testAnotherAppliersObjectIsNeitherMirroredNorAdopted(t *testing.T, a, other gitopsApplier) {
	var also []gitopsApplier
	if other != a {
		also = append(also, other)
	}
	l := newStoppedLoop(t, a, also...)
	l.startOperator(nil)
	if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{
		"other/theirs.yaml": configMapDoc(l.ns, "theirs", "1")}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the target's catch-up", func() bool { return l.applyStatus().Applied != "" })
	other.source(l, "other", "other")
	waitFor(t, "the other applier object's object on the cluster", func() bool { return l.live("theirs") == "1" })

	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "ours"}, Data: map[string]string{"v": "1"}})
	waitFor(t, "our ConfigMap in Git", func() bool { return l.inGit(l.folder+"ours.yaml") != "" })
	waitFor(t, "our ConfigMap adopted", func() bool { return l.adopted("ours") })
	if l.inGit(l.folder+"theirs.yaml") != "" {
		t.Fatal("another applier object's object was mirrored into the target's folder")
	}
	var theirs corev1.ConfigMap
	if err := l.cp.Client.Get(l.ctx(), keyOf(l.ns, "theirs"), &theirs); err != nil {
		t.Fatal(err)
	}
	if !other.owns(&theirs, "other") || a.owns(&theirs, "apps") {
		t.Fatalf("the other applier object's object is no longer only its own: labels %v, annotations %v", theirs.Labels, theirs.Annotations)
	}
}
