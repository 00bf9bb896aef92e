//go:build e2e

package controller_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A folder refused for foreign content, and fixed by a push, shows both on the GitTarget as
// the worker sees them. The status resync is an hour, so only the worker's report of its own
// state can move GitPathAccepted within the test's deadline
// (docs/controllers.md#status-follows-the-worker).
func TestTheFolderConditionFollowsTheWorkerWithoutWaitingForAResync(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperatorWith(t, cp.Config, t.TempDir(), func(o *operator.Options) { o.StatusResync = time.Hour })
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "cms", "live", configMapsRule()))
	targetReady(t, gt)
	conds := func() []metav1.Condition { return gt.Status.Conditions }

	// Someone pushes a file the writer cannot understand; the next change finds it.
	foreign := "live/" + ns + "/notes.bin"
	if _, err := r.server.PushForeign(r.name, "main", testenv.ForeignChange{Files: map[string]string{foreign: "\x00\x01"}, Message: "add notes"}); err != nil {
		t.Fatal(err)
	}
	create(t, configMap(ns, "held", map[string]string{"v": "1"}))
	refused := waitCondition(t, gt, conds, v1.ConditionGitPathAccepted, metav1.ConditionFalse, v1.ReasonUnsupportedContent)
	t.Logf("refused: %s", refused.Message)

	// The push that removes it lets the held change through, and the condition follows.
	if _, err := r.server.PushForeign(r.name, "main", testenv.ForeignChange{Delete: []string{foreign}, Message: "remove notes"}); err != nil {
		t.Fatal(err)
	}
	held := "live/" + ns + "/core/configmaps/held.yaml"
	waitFor(t, "the held change to land after the fix", func() bool { return r.has(held) })
	waitCondition(t, gt, conds, v1.ConditionGitPathAccepted, metav1.ConditionTrue, "")
	targetReady(t, gt)
}
