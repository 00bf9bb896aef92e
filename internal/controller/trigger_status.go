package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
)

// triggerRequeue refreshes a trigger's status from the workers of its targets.
const triggerRequeue = 15 * time.Second

// triggerStatus points into the status of a FluxTrigger or an ArgoCDTrigger.
type triggerStatus struct {
	common             *v1.CommonStatus
	requested, applied *string
}

// triggerReconciler is the reconcile both trigger kinds share: whether the applier object
// exists, and what the workers of the GitTargets naming the trigger report.
type triggerReconciler struct {
	client.Client
	Pipeline *pipeline.Pipeline
}

// reconcile reports the trigger obj of kind, which names the applier object to; crds names
// whose CRDs are missing when its kind is unknown ("Flux's").
func (r triggerReconciler) reconcile(ctx context.Context, obj client.Object, kind string, to triggered, status *triggerStatus, crds string) (reconcile.Result, error) {
	orig, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return reconcile.Result{}, fmt.Errorf("copy %s %s", kind, client.ObjectKeyFromObject(obj))
	}
	key := client.ObjectKeyFromObject(obj)
	conds := conditions{list: &status.common.Conditions, generation: obj.GetGeneration()}
	refused := crossNamespaceRefused(kind, key, to, r.Pipeline.NoCrossNamespaceTriggers)
	if refused != "" {
		conds.ready(false, ReasonCrossNamespaceRefused, refused, true)
	} else {
		target := &unstructured.Unstructured{}
		target.SetGroupVersionKind(to.gvk)
		switch err := r.Get(ctx, to.key, target); {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			conds.ready(false, string(applier.ReasonNotFound), fmt.Sprintf("%s %s does not exist (or %s CRDs are not installed): create it, or name an existing one", to.gvk.Kind, to.key, crds), false)
		case err != nil:
			return reconcile.Result{}, fmt.Errorf("read %s %s: %w", to.gvk.Kind, to.key, err)
		default:
			r.reportApplies(ctx, key, kind, to, status, conds)
		}
	}
	status.common.ObservedGeneration = obj.GetGeneration()
	if err := r.Status().Patch(ctx, obj, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update status of %s %s: %w", kind, key, err)
	}
	return reconcile.Result{RequeueAfter: triggerRequeue}, nil
}

// reportApplies copies what the workers of the targets naming the trigger report.
func (r triggerReconciler) reportApplies(ctx context.Context, trigger client.ObjectKey, kind string, to triggered, status *triggerStatus, conds conditions) {
	var targets v1.GitTargetList
	if err := r.List(ctx, &targets, client.InNamespace(trigger.Namespace)); err != nil {
		conds.ready(false, ReasonApplyPending, fmt.Sprintf("list GitTargets: %v", err), false)
		return
	}
	failing, named := "", 0
	for i := range targets.Items {
		t := &targets.Items[i]
		if !namesTrigger(t, kind, trigger.Name) {
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
			*status.requested = a.Requested
		}
		if a.Applied != "" {
			*status.applied = a.Applied
		}
		if a.LastError != "" {
			failing = fmt.Sprintf("GitTarget %s: %s", name, a.LastError)
		}
	}
	switch {
	case failing != "":
		conds.ready(false, ReasonApplyFailing, failing+"; retrying", false)
	case named == 0:
		conds.ready(true, ReasonReady, fmt.Sprintf("the %s exists; no GitTarget names this trigger yet", to.gvk.Kind), false)
	default:
		conds.ready(true, ReasonReady, fmt.Sprintf("the %s exists; %d GitTarget(s) name this trigger", to.gvk.Kind, named), false)
	}
}

// namesTrigger reports whether the target's applyTriggerRef names the trigger kind/name.
func namesTrigger(t *v1.GitTarget, kind, name string) bool {
	ref := t.Spec.ApplyTriggerRef
	return ref != nil && ref.Kind == kind && ref.Name == name
}
