//go:build e2e

package controller_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
)

// CommitRequests waiting for a push that cannot happen (their Git server is down) hold no
// reconcile: more of them than there are reconcile workers still let another target's
// request through.
func TestWaitingCommitRequestsDoNotStarveOthers(t *testing.T) {
	ns := newNamespace(t, nil)
	down, up := newRepo(t), newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	hour := func(p *v1.GitProvider) { p.Spec.Push.CommitWindow = &metav1.Duration{Duration: time.Hour} }
	providerWithSecret(t, ns, "down", down, hour)
	providerWithSecret(t, ns, "up", up, hour)
	stuck, fine := target(ns, "stuck", "down", "stuck", v1.PruneOnEvent), target(ns, "fine", "up", "fine", v1.PruneOnEvent)
	create(t, stuck)
	create(t, fine)
	create(t, watchRule(ns, "cms", "stuck", configMapsRule()))
	targetReady(t, stuck)
	targetReady(t, fine)

	// A change waits in the stuck target's window; its server goes down; requests pile up.
	create(t, configMap(ns, "waiting", map[string]string{"v": "1"}))
	down.http.SetDown(true)
	for i := 0; i < 6; i++ {
		create(t, &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("stuck-%d", i)},
			Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "stuck"}, Message: "save"}})
	}
	other := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"},
		Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "fine"}, Message: "save"}}
	create(t, other)
	waitCondition(t, other, func() []metav1.Condition { return other.Status.Conditions }, v1.ConditionPushed, metav1.ConditionTrue, controller.ReasonNothingPending)

	// Once the server is back, the stuck target's requests are answered too.
	down.http.SetDown(false)
	last := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuck-5"}}
	waitCondition(t, last, func() []metav1.Condition { return last.Status.Conditions }, v1.ConditionPushed, metav1.ConditionTrue, "")
}
