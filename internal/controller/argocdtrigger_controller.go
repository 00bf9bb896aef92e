package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
)

// ArgoCDTriggerReconciler reports whether an ArgoCDTrigger's Application exists and what
// the branch workers of the GitTargets naming it last asked and got synced. The workers own
// the applies; this reconciler only reads them (docs/two-way.md).
type ArgoCDTriggerReconciler struct {
	client.Client
	Pipeline *pipeline.Pipeline
}

func (r *ArgoCDTriggerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&v1.ArgoCDTrigger{}).Named("argocdtrigger").Complete(r)
}

func (r *ArgoCDTriggerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var at v1.ArgoCDTrigger
	if err := r.Get(ctx, req.NamespacedName, &at); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return triggerReconciler{r.Client, r.Pipeline}.reconcile(ctx, &at, kindArgoCDTrigger, argoCDTriggered(&at), &triggerStatus{
		common: &at.Status.CommonStatus, requested: &at.Status.LastRequestedRevision, applied: &at.Status.LastAppliedRevision,
	}, "Argo CD's")
}
