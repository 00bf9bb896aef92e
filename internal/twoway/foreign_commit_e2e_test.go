//go:build e2e

package twoway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// A Git-side push into the folder reaches the cluster through Flux, which only acts when
// asked (an hour's interval): the operator finds the push and asks for it. Flux's apply
// comes back through the watch and is not mirrored as a change (no echo commit), and an
// API edit asks for no apply (E10).
func TestAGitSidePushIsAppliedAndAnAPIEditAsksNoApply(t *testing.T) {
	eachApplier(t, testAGitSidePushIsAppliedAndAnAPIEditAsksNoApply)
}

func testAGitSidePushIsAppliedAndAnAPIEditAsksNoApply(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "api-made"}, Data: map[string]string{"v": "1"}})
	waitFor(t, "the API-made ConfigMap in Git", func() bool { return l.inGit(l.folder+"api-made.yaml") != "" })
	waitFor(t, "the API-made ConfigMap adopted by Flux", func() bool { return l.adopted("api-made") })
	l.appliesSettled()

	// API edits land in Git and ask for no apply.
	before := l.applyStatus()
	for _, v := range []string{"2", "3"} {
		l.setValue("api-made", v)
	}
	waitFor(t, "the API edits in Git", func() bool { return l.inGit(l.folder+"api-made.yaml") == configMapDoc(l.ns, "api-made", "3") })
	// Asked through the worker's loop, after the push that published the edits.
	if after := l.applyStatus(); after.Due != "" || after.InFlight != "" || after.Requested != before.Requested {
		t.Fatalf("applies %+v before the API edits, %+v once they are in Git: an API edit asked for an apply", before, after)
	}

	// A Git-side push adds a ConfigMap: the operator asks Flux to apply it.
	gitMade := l.folder + "git-made.yaml"
	if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{gitMade: configMapDoc(l.ns, "git-made", "from-git")}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Git-side ConfigMap on the cluster", func() bool { return l.live("git-made") == "from-git" })
	// (Flux's own interval is an hour: only the operator's request applied it.)
	waitFor(t, "the worker to report the pushed commit applied", func() bool {
		st := l.applyStatus()
		return st.Requested != before.Requested && st.Applied != ""
	})

	// Flux's apply came back through the watch before this later ConfigMap: by the time it
	// is in Git, an echo would have been committed.
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "marker"}, Data: map[string]string{"v": "1"}})
	waitFor(t, "the marker in Git", func() bool { return l.inGit(l.folder+"marker.yaml") != "" })
	if commits := l.commitsTouching(gitMade); len(commits) != 1 {
		t.Fatalf("%d commits changed %s, want only the Git-side push (no echo of Flux's apply): %+v", len(commits), gitMade, commits)
	}
	if l.live("api-made") != "3" {
		t.Fatalf("the API edit was reverted on the cluster: v=%q", l.live("api-made"))
	}
}
