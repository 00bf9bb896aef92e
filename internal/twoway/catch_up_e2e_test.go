//go:build e2e

package twoway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E9: work made while the operator was down — an object created through the API, and a
// Git-side push of a kind the operator does not watch — is mirrored before anything is
// applied; then the catch-up apply brings the pushed object to the cluster and adopts the
// API-made one.
func TestWorkMadeWhileTheOperatorWasDownIsMirroredThenApplied(t *testing.T) {
	eachApplier(t, testWorkMadeWhileTheOperatorWasDownIsMirroredThenApplied)
}

func testWorkMadeWhileTheOperatorWasDownIsMirroredThenApplied(t *testing.T, a gitopsApplier) {
	l := newStoppedLoop(t, a)
	waitFor(t, "the applier's first apply of the branch", func() bool { return a.applied(l) })
	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "offline"}, Data: map[string]string{"v": "1"}})
	robot := "apps/" + l.ns + "/core/serviceaccounts/robot.yaml"
	if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{
		robot: "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  namespace: " + l.ns + "\n"}}); err != nil {
		t.Fatal(err)
	}

	l.startOperator(nil)
	waitFor(t, "the Git-side ServiceAccount on the cluster", func() bool {
		return l.cp.Client.Get(l.ctx(), keyOf(l.ns, "robot"), &corev1.ServiceAccount{}) == nil
	})
	if l.inGit(l.folder+"offline.yaml") == "" {
		t.Fatal("an apply went before the ConfigMap made while the operator was down was in Git")
	}
	waitFor(t, "the API-made ConfigMap adopted", func() bool { return l.adopted("offline") })
	if l.live("offline") != "1" {
		t.Fatalf("the ConfigMap made while the operator was down is %q on the cluster", l.live("offline"))
	}
}
