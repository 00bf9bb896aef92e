package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// ConditionApplied says whether the applier named by spec.applyTriggerRef applies what the
// target writes (docs/two-way.md).
const ConditionApplied = "Applied"

// Reasons of the Applied condition.
const (
	ReasonTriggerNotFound = "TriggerNotFound"
	ReasonApplyPending    = "ApplyPending"
	ReasonApplyFailing    = "ApplyFailing"
	// ReasonCrossNamespaceRefused: --no-cross-namespace-triggers and a Kustomization or an
	// Application of another namespace.
	ReasonCrossNamespaceRefused = "CrossNamespaceRefused"
)

// The kinds of trigger a GitTarget's applyTriggerRef may name.
const (
	kindFluxTrigger   = worker.KindFluxTrigger
	kindArgoCDTrigger = worker.KindArgoCDTrigger
)

// triggered is the applier object a trigger names: a Flux Kustomization or an Argo CD
// Application.
type triggered struct {
	gvk schema.GroupVersionKind
	key types.NamespacedName
}

// fluxTriggered is the Kustomization a FluxTrigger names (its namespace defaults to the
// trigger's).
func fluxTriggered(ft *v1.FluxTrigger) triggered {
	ref := ft.Spec.KustomizationRef
	return triggered{gvk: applier.KustomizationGVK, key: types.NamespacedName{Namespace: orDefaultNamespace(ref.Namespace, ft.Namespace), Name: ref.Name}}
}

// argoCDTriggered is the Application an ArgoCDTrigger names (its namespace defaults to the
// trigger's).
func argoCDTriggered(at *v1.ArgoCDTrigger) triggered {
	ref := at.Spec.ApplicationRef
	return triggered{gvk: applier.ApplicationGVK, key: types.NamespacedName{Namespace: orDefaultNamespace(ref.Namespace, at.Namespace), Name: ref.Name}}
}

func orDefaultNamespace(ns, def string) string {
	if ns != "" {
		return ns
	}
	return def
}

// triggerRefusal is why a target's applyTriggerRef gives the worker no applier.
type triggerRefusal struct{ reason, message string }

// applyTriggerOf resolves the target's applyTriggerRef to the applier object the worker
// asks, or nil with the reason it cannot (the target then mirrors without asking, and its
// Applied condition says why). A read error is returned: the reconcile is retried.
func applyTriggerOf(ctx context.Context, c client.Reader, t *v1.GitTarget, noCrossNamespace bool) (*worker.ApplyTrigger, *triggerRefusal, error) {
	ref := t.Spec.ApplyTriggerRef
	if ref == nil {
		return nil, nil, nil
	}
	key := client.ObjectKey{Namespace: t.Namespace, Name: ref.Name}
	var obj client.Object
	var target func() triggered
	switch ref.Kind {
	case kindArgoCDTrigger:
		at := &v1.ArgoCDTrigger{}
		obj, target = at, func() triggered { return argoCDTriggered(at) }
	default:
		ft := &v1.FluxTrigger{}
		obj, target = ft, func() triggered { return fluxTriggered(ft) }
	}
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &triggerRefusal{ReasonTriggerNotFound, fmt.Sprintf("%s %s named by spec.applyTriggerRef does not exist: create it, or remove applyTriggerRef", ref.Kind, key)}, nil
		}
		return nil, nil, fmt.Errorf("read %s %s: %w", ref.Kind, key, err)
	}
	to := target()
	if msg := crossNamespaceRefused(ref.Kind, key, to, noCrossNamespace); msg != "" {
		return nil, &triggerRefusal{ReasonCrossNamespaceRefused, msg}, nil
	}
	return &worker.ApplyTrigger{Kind: ref.Kind, Namespace: to.key.Namespace, Name: to.key.Name}, nil, nil
}

// reportApplied sets the Applied condition from the worker's state of the target's
// applies; it is absent when the target names no applier.
func reportApplied(conds conditions, t *v1.GitTarget, refused *triggerRefusal, st worker.ApplyStatus, named bool) {
	switch {
	case t.Spec.ApplyTriggerRef == nil:
		meta.RemoveStatusCondition(conds.list, ConditionApplied)
	case refused != nil:
		conds.set(ConditionApplied, false, refused.reason, refused.message+"; the folder is mirrored without asking an applier")
	case !named:
		conds.unknown(ConditionApplied, ReasonApplyPending, "the branch worker has not taken the trigger yet")
	case st.LastError != "":
		conds.set(ConditionApplied, false, ReasonApplyFailing, fmt.Sprintf("asking to apply %s failed: %s; retrying", st.Requested, st.LastError))
	case st.Due != "" || st.InFlight != "":
		conds.unknown(ConditionApplied, ReasonApplyPending, fmt.Sprintf("an apply (%s) waits for the branch's pushes or for the applier's answer; last applied %s", st.Due+st.InFlight, orNone(st.Applied)))
	default:
		conds.set(ConditionApplied, true, ReasonReady, fmt.Sprintf("the applier applied %s", orNone(st.Applied)))
	}
}

// crossNamespaceRefused says why the trigger (kind, key) may not name its applier object,
// "" when it may.
func crossNamespaceRefused(kind string, key types.NamespacedName, to triggered, noCrossNamespace bool) string {
	if !noCrossNamespace || to.key.Namespace == key.Namespace {
		return ""
	}
	return fmt.Sprintf("%s %s names a %s of namespace %q and the operator runs with --no-cross-namespace-triggers: name a %s of the trigger's own namespace",
		kind, key, to.gvk.Kind, to.key.Namespace, to.gvk.Kind)
}

func orNone(s string) string {
	if s == "" {
		return "nothing yet"
	}
	return s
}
