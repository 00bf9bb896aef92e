//go:build e2e

package twoway

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
)

// With --no-cross-namespace-triggers a tenant's FluxTrigger may not name a Kustomization of
// another namespace (here flux-system): the trigger and the GitTarget say so, and the
// folder is mirrored without asking Flux.
func TestACrossNamespaceTriggerIsRefusedUnderLockdown(t *testing.T) {
	l := newLoopWith(t, func(o *operator.Options) { o.NoCrossNamespaceTriggers = true })
	waitFor(t, "the GitTarget to say the trigger is refused", func() bool {
		var gt v1.GitTarget
		if l.cp.Client.Get(l.ctx(), keyOf(l.ns, "apps"), &gt) != nil {
			return false
		}
		c := meta.FindStatusCondition(gt.Status.Conditions, controller.ConditionApplied)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == controller.ReasonCrossNamespaceRefused
	})
	waitFor(t, "the FluxTrigger to say so too", func() bool {
		var ft v1.FluxTrigger
		if l.cp.Client.Get(l.ctx(), keyOf(l.ns, "apps"), &ft) != nil {
			return false
		}
		c := meta.FindStatusCondition(ft.Status.Conditions, v1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == controller.ReasonCrossNamespaceRefused
	})
}
