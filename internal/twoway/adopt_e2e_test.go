//go:build e2e

package twoway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E2: an object created through the API is written to Git and adopted by Flux (an apply
// follows the push that created its document), so that a Git-side delete of its file
// prunes it from the cluster, and nothing writes it back.
func TestAnAPIMadeObjectIsAdoptedSoAGitSideDeletePrunesIt(t *testing.T) {
	eachApplier(t, testAnAPIMadeObjectIsAdoptedSoAGitSideDeletePrunesIt)
}

func testAnAPIMadeObjectIsAdoptedSoAGitSideDeletePrunesIt(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "short-lived"}, Data: map[string]string{"v": "1"}})
	path := l.folder + "short-lived.yaml"
	waitFor(t, "the API-made ConfigMap in Git", func() bool { return l.inGit(path) != "" })
	waitFor(t, "Flux to adopt it", func() bool { return l.adopted("short-lived") })

	if _, err := l.pushForeign(testenv.ForeignChange{Delete: []string{path}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Flux to prune it from the cluster", func() bool {
		err := l.cp.Client.Get(l.ctx(), keyOf(l.ns, "short-lived"), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err)
	})
	// The prune came back through the watch before this later ConfigMap.
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "marker"}, Data: map[string]string{"v": "1"}})
	waitFor(t, "the marker in Git", func() bool { return l.inGit(l.folder+"marker.yaml") != "" })
	if l.inGit(path) != "" {
		t.Fatalf("the Git-side delete was undone: %s is back in Git", path)
	}
}
