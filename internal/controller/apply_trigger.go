package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
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
	// ReasonCrossNamespaceRefused: --no-cross-namespace-triggers and a Kustomization of
	// another namespace.
	ReasonCrossNamespaceRefused = "CrossNamespaceRefused"
)

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
	var ft v1.FluxTrigger
	if err := c.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: ref.Name}, &ft); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &triggerRefusal{ReasonTriggerNotFound, fmt.Sprintf("FluxTrigger %s/%s named by spec.applyTriggerRef does not exist: create it, or remove applyTriggerRef", t.Namespace, ref.Name)}, nil
		}
		return nil, nil, fmt.Errorf("read FluxTrigger %s/%s: %w", t.Namespace, ref.Name, err)
	}
	if msg := crossNamespaceRefused(&ft, noCrossNamespace); msg != "" {
		return nil, &triggerRefusal{ReasonCrossNamespaceRefused, msg}, nil
	}
	return &worker.ApplyTrigger{Kind: ref.Kind, Namespace: kustomizationNamespace(&ft), Name: ft.Spec.KustomizationRef.Name}, nil, nil
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

// kustomizationNamespace is the namespace of the trigger's Kustomization.
func kustomizationNamespace(ft *v1.FluxTrigger) string {
	if ns := ft.Spec.KustomizationRef.Namespace; ns != "" {
		return ns
	}
	return ft.Namespace
}

// crossNamespaceRefused says why the trigger may not name its Kustomization, "" when it may.
func crossNamespaceRefused(ft *v1.FluxTrigger, noCrossNamespace bool) string {
	if !noCrossNamespace || kustomizationNamespace(ft) == ft.Namespace {
		return ""
	}
	return fmt.Sprintf("FluxTrigger %s/%s names a Kustomization of namespace %q and the operator runs with --no-cross-namespace-triggers: name a Kustomization of the trigger's own namespace",
		ft.Namespace, ft.Name, kustomizationNamespace(ft))
}

func orNone(s string) string {
	if s == "" {
		return "nothing yet"
	}
	return s
}
