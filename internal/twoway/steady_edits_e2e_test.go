//go:build e2e

package twoway

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E6: a Git-side push is applied while API edits keep arriving (10 a second for 30 s): the
// push reaches the cluster, and every edit ends in Git and on the cluster (the last one in
// both).
func TestAGitSidePushIsAppliedWhileEditsKeepArriving(t *testing.T) {
	eachApplier(t, testAGitSidePushIsAppliedWhileEditsKeepArriving)
}

func testAGitSidePushIsAppliedWhileEditsKeepArriving(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "steady"}, Data: map[string]string{"v": "0"}})
	waitFor(t, "the ConfigMap adopted", func() bool { return l.adopted("steady") })
	l.appliesSettled()

	pushed := false
	last := ""
	tick := time.NewTicker(100 * time.Millisecond) // the load's pace, not a wait for a condition
	defer tick.Stop()
	for i := 1; i <= 300; i++ {
		<-tick.C
		last = fmt.Sprint(i)
		l.setValue("steady", last)
		if i == 50 && !pushed {
			pushed = true
			if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{
				l.folder + "pushed.yaml": configMapDoc(l.ns, "pushed", "from-git")}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "the push on the cluster", func() bool { return l.live("pushed") == "from-git" })
	want := configMapDoc(l.ns, "steady", last)
	waitFor(t, "the last edit in Git and on the cluster", func() bool {
		return l.inGit(l.folder+"steady.yaml") == want && l.live("steady") == last
	})
	l.appliesSettled()
	if l.inGit(l.folder+"steady.yaml") != want || l.live("steady") != last || l.inGit(l.folder+"pushed.yaml") == "" {
		t.Fatalf("after the applies settled: Git %q, live %q; want %q in both, and the push kept", l.inGit(l.folder+"steady.yaml"), l.live("steady"), last)
	}
}
