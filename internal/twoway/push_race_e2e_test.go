//go:build e2e

package twoway

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E1: Git-side pushes race the operator's own pushes of API edits (each edit made right
// before a push of another file, so that the operator's push finds the remote moved and
// replays). Nothing is reverted: every edit and every pushed file ends in Git and on the
// cluster.
func TestGitSidePushesRacingAPIEditsRevertNothing(t *testing.T) {
	eachApplier(t, testGitSidePushesRacingAPIEditsRevertNothing)
}

func testGitSidePushesRacingAPIEditsRevertNothing(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "raced"}, Data: map[string]string{"v": "0"}})
	waitFor(t, "the ConfigMap adopted", func() bool { return l.adopted("raced") })
	l.appliesSettled()

	const rounds = 5
	for i := 1; i <= rounds; i++ {
		l.setValue("raced", fmt.Sprint(i))
		name := fmt.Sprintf("pushed-%d", i)
		if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{
			l.folder + name + ".yaml": configMapDoc(l.ns, name, "from-git")}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= rounds; i++ {
		name := fmt.Sprintf("pushed-%d", i)
		waitFor(t, name+" on the cluster", func() bool { return l.live(name) == "from-git" })
	}
	last := fmt.Sprint(rounds)
	waitFor(t, "the last edit in Git and on the cluster", func() bool {
		return l.inGit(l.folder+"raced.yaml") == configMapDoc(l.ns, "raced", last) && l.live("raced") == last
	})
	l.appliesSettled()
	for i := 1; i <= rounds; i++ {
		if l.inGit(fmt.Sprintf("%spushed-%d.yaml", l.folder, i)) == "" {
			t.Fatalf("pushed-%d was reverted in Git", i)
		}
	}
	if l.live("raced") != last || l.inGit(l.folder+"raced.yaml") != configMapDoc(l.ns, "raced", last) {
		t.Fatalf("the last edit was reverted: Git %q, live %q", l.inGit(l.folder+"raced.yaml"), l.live("raced"))
	}
}
