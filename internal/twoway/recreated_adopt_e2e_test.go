//go:build e2e

package twoway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E3: an object deleted through the API and created again is adopted again (the new object
// carries none of Flux's labels), so that a Git-side delete of its file prunes it, and a
// resync racing the prune does not write it back.
func TestAnObjectDeletedAndCreatedAgainIsAdoptedSoAGitSideDeletePrunesIt(t *testing.T) {
	eachApplier(t, testAnObjectDeletedAndCreatedAgainIsAdoptedSoAGitSideDeletePrunesIt)
}

func testAnObjectDeletedAndCreatedAgainIsAdoptedSoAGitSideDeletePrunesIt(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	path := l.folder + "phoenix.yaml"
	cm := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "phoenix"}, Data: map[string]string{"v": "1"}}
	}
	l.create(cm())
	waitFor(t, "Flux to adopt the first object", func() bool { return l.adopted("phoenix") })
	if err := l.cp.Client.Delete(l.ctx(), cm()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the API delete in Git", func() bool { return l.inGit(path) == "" })
	l.appliesSettled()
	l.create(cm())
	waitFor(t, "the object created again in Git", func() bool { return l.inGit(path) != "" })
	waitFor(t, "Flux to adopt the object created again", func() bool { return l.adopted("phoenix") })

	if _, err := l.pushForeign(testenv.ForeignChange{Delete: []string{path}}); err != nil {
		t.Fatal(err)
	}
	l.forceResync() // a snapshot racing the prune
	waitFor(t, "Flux to prune it from the cluster", func() bool {
		err := l.cp.Client.Get(l.ctx(), keyOf(l.ns, "phoenix"), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err)
	})
	l.appliesSettled()
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "marker"}, Data: map[string]string{"v": "1"}})
	waitFor(t, "the marker in Git", func() bool { return l.inGit(l.folder+"marker.yaml") != "" })
	if l.inGit(path) != "" {
		t.Fatalf("the Git-side delete was undone: %s is back in Git", path)
	}
}
