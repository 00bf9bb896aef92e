//go:build e2e

package twoway

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
)

// With --no-cross-namespace-triggers a tenant's trigger may not name a Kustomization or an
// Application of another namespace (here flux-system, argocd): the trigger and the
// GitTarget say so, and the folder is mirrored without asking the applier.
func TestACrossNamespaceTriggerIsRefusedUnderLockdown(t *testing.T) {
	eachApplier(t, testACrossNamespaceTriggerIsRefusedUnderLockdown)
}

func testACrossNamespaceTriggerIsRefusedUnderLockdown(t *testing.T, a gitopsApplier) {
	l := newLoopWith(t, a, func(o *operator.Options) { o.NoCrossNamespaceTriggers = true })
	waitFor(t, "the GitTarget to say the trigger is refused", func() bool {
		var gt v1.GitTarget
		if l.cp.Client.Get(l.ctx(), keyOf(l.ns, "apps"), &gt) != nil {
			return false
		}
		c := meta.FindStatusCondition(gt.Status.Conditions, controller.ConditionApplied)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == controller.ReasonCrossNamespaceRefused
	})
	waitFor(t, "the trigger to say so too", func() bool {
		trigger := &unstructured.Unstructured{}
		trigger.SetGroupVersionKind(v1.GroupVersion.WithKind(a.triggerKind()))
		if l.cp.Client.Get(l.ctx(), keyOf(l.ns, "apps"), trigger) != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(trigger.Object, "status", "conditions")
		return slices.ContainsFunc(conds, func(c any) bool {
			m, _ := c.(map[string]any)
			return m["type"] == v1.ConditionReady && m["status"] == string(metav1.ConditionFalse) && m["reason"] == controller.ReasonCrossNamespaceRefused
		})
	})
}
