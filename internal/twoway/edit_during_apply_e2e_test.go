//go:build e2e

package twoway

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E5: API edits made while Flux applies a Git-side push end in Git and on the cluster. An
// apply can overwrite an edit the worker had not received when it asked for the apply; the
// worker withholds that write and has the commit holding the edit applied (Repair).
func TestEditsMadeDuringAnApplyEndInGitAndOnTheCluster(t *testing.T) {
	eachApplier(t, testEditsMadeDuringAnApplyEndInGitAndOnTheCluster)
}

func testEditsMadeDuringAnApplyEndInGitAndOnTheCluster(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "busy"}, Data: map[string]string{"v": "0"}})
	waitFor(t, "the ConfigMap adopted by Flux", func() bool { return l.adopted("busy") })
	l.appliesSettled()

	// Git-side pushes of another file, each applied while the ConfigMap is edited.
	last := ""
	for round := 1; round <= 5; round++ {
		other := fmt.Sprintf("%sgit-%d.yaml", l.folder, round)
		if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{other: configMapDoc(l.ns, fmt.Sprintf("git-%d", round), "x")}}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			last = fmt.Sprintf("%d-%d", round, i)
			// Flux may write the object between a read and an update: read again, as kubectl
			// edit would.
			l.setValue("busy", last)
		}
		waitFor(t, fmt.Sprintf("round %d's Git-side ConfigMap on the cluster", round), func() bool { return l.live(fmt.Sprintf("git-%d", round)) == "x" })
	}
	want := configMapDoc(l.ns, "busy", last)
	waitFor(t, "the last edit in Git and on the cluster", func() bool {
		return l.inGit(l.folder+"busy.yaml") == want && l.live("busy") == last
	})
	l.appliesSettled()
	if l.inGit(l.folder+"busy.yaml") != want || l.live("busy") != last {
		t.Fatalf("after the applies settled: Git %q, live %q; want %q in both", l.inGit(l.folder+"busy.yaml"), l.live("busy"), last)
	}
}
