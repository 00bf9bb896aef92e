package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
)

// FluxTriggerReconciler reports whether a FluxTrigger's Kustomization exists and what the
// branch workers of the GitTargets naming it last asked and got applied. The workers own
// the applies; this reconciler only reads them (docs/two-way.md).
type FluxTriggerReconciler struct {
	client.Client
	Pipeline *pipeline.Pipeline
}

func (r *FluxTriggerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&v1.FluxTrigger{}).Named("fluxtrigger").Complete(r)
}

func (r *FluxTriggerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var ft v1.FluxTrigger
	if err := r.Get(ctx, req.NamespacedName, &ft); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return triggerReconciler{r.Client, r.Pipeline}.reconcile(ctx, &ft, kindFluxTrigger, fluxTriggered(&ft), &triggerStatus{
		common: &ft.Status.CommonStatus, requested: &ft.Status.LastRequestedRevision, applied: &ft.Status.LastAppliedRevision,
	}, "Flux's")
}
