package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
)

// triggerRequeue refreshes a trigger's status from the workers of its targets.
const triggerRequeue = 15 * time.Second

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
	orig := ft.DeepCopy()
	conds := conditions{list: &ft.Status.Conditions, generation: ft.Generation}
	ks := ft.Spec.KustomizationRef
	ks.Namespace = kustomizationNamespace(&ft)
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(applier.KustomizationGVK)
	refused := crossNamespaceRefused(&ft, r.Pipeline.NoCrossNamespaceTriggers)
	switch err := r.getUnlessRefused(ctx, refused, client.ObjectKey{Namespace: ks.Namespace, Name: ks.Name}, obj); {
	case refused != "":
		conds.ready(false, ReasonCrossNamespaceRefused, refused, true)
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		conds.ready(false, string(applier.ReasonNotFound), fmt.Sprintf("Kustomization %s/%s does not exist (or Flux's CRDs are not installed): create it, or name an existing one", ks.Namespace, ks.Name), false)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("read Kustomization %s/%s: %w", ks.Namespace, ks.Name, err)
	default:
		r.reportApplies(ctx, &ft, conds)
	}
	ft.Status.ObservedGeneration = ft.Generation
	if err := r.Status().Patch(ctx, &ft, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update status of FluxTrigger %s: %w", req.NamespacedName, err)
	}
	return reconcile.Result{RequeueAfter: triggerRequeue}, nil
}

// reportApplies copies what the workers of the targets naming the trigger report.
func (r *FluxTriggerReconciler) reportApplies(ctx context.Context, ft *v1.FluxTrigger, conds conditions) {
	var targets v1.GitTargetList
	if err := r.List(ctx, &targets, client.InNamespace(ft.Namespace)); err != nil {
		conds.ready(false, ReasonApplyPending, fmt.Sprintf("list GitTargets: %v", err), false)
		return
	}
	failing, named := "", 0
	for i := range targets.Items {
		t := &targets.Items[i]
		if ref := t.Spec.ApplyTriggerRef; ref == nil || ref.Name != ft.Name {
			continue
		}
		named++
		name := client.ObjectKeyFromObject(t).String()
		key, ok := r.Pipeline.Router.Key(name)
		if !ok {
			continue
		}
		w, ok := r.Pipeline.Workers.Lookup(key)
		if !ok {
			continue
		}
		statusCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
		st, err := w.Status(statusCtx)
		cancel()
		if err != nil {
			continue
		}
		a := st.Applies[name]
		if a.Requested != "" {
			ft.Status.LastRequestedRevision = a.Requested
		}
		if a.Applied != "" {
			ft.Status.LastAppliedRevision = a.Applied
		}
		if a.LastError != "" {
			failing = fmt.Sprintf("GitTarget %s: %s", name, a.LastError)
		}
	}
	switch {
	case failing != "":
		conds.ready(false, ReasonApplyFailing, failing+"; retrying", false)
	case named == 0:
		conds.ready(true, ReasonReady, "the Kustomization exists; no GitTarget names this trigger yet", false)
	default:
		conds.ready(true, ReasonReady, fmt.Sprintf("the Kustomization exists; %d GitTarget(s) name this trigger", named), false)
	}
}

// getUnlessRefused reads the Kustomization, unless the trigger may not name it.
func (r *FluxTriggerReconciler) getUnlessRefused(ctx context.Context, refused string, key client.ObjectKey, obj client.Object) error {
	if refused != "" {
		return nil
	}
	return r.Get(ctx, key, obj)
}
