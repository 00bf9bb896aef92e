//go:build e2e

package twoway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E7: a resync forced while a Git-side push waits for its apply (here the applier is suspended)
// lists the cluster as it was before the push; written, it would revert the push in Git.
// It is discarded, and once the apply landed a new snapshot is taken: the push survives in
// Git and reaches the cluster.
func TestAGitSidePushSurvivesAResyncBeforeItsApply(t *testing.T) {
	eachApplier(t, testAGitSidePushSurvivesAResyncBeforeItsApply)
}

func testAGitSidePushSurvivesAResyncBeforeItsApply(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "x"}, Data: map[string]string{"v": "1"}})
	path := l.folder + "x.yaml"
	waitFor(t, "the ConfigMap in Git", func() bool { return l.inGit(path) != "" })
	waitFor(t, "the ConfigMap adopted", func() bool { return l.adopted("x") })
	l.appliesSettled()

	a.suspend(l, true)
	if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{path: configMapDoc(l.ns, "x", "from-git")}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker to see Git ahead of the cluster", func() bool { return l.applyStatus().GitAhead })

	// A rule edit renews the subscription: a resync of the cluster, where x is still "1".
	l.forceResync()
	waitFor(t, "the resync taken while Git is ahead to be discarded", func() bool { return l.applyStatus().Discarded >= 1 })
	if got := l.inGit(path); got != configMapDoc(l.ns, "x", "from-git") {
		t.Fatalf("the resync reverted the Git-side push: %q", got)
	}

	a.suspend(l, false)
	waitFor(t, "the push on the cluster", func() bool { return l.live("x") == "from-git" })
	waitFor(t, "Git caught up by the cluster", func() bool { return !l.applyStatus().GitAhead })
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "marker"}, Data: map[string]string{"v": "1"}})
	waitFor(t, "the marker in Git", func() bool { return l.inGit(l.folder+"marker.yaml") != "" })
	if got := l.inGit(path); got != configMapDoc(l.ns, "x", "from-git") {
		t.Fatalf("the Git-side push was reverted after the apply: %q", got)
	}
}
