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
)

// applyTriggerOf resolves the target's applyTriggerRef to the applier object the worker
// asks, or nil with the reason it cannot (the target then mirrors without asking, and its
// Applied condition says why). A read error is returned: the reconcile is retried.
func applyTriggerOf(ctx context.Context, c client.Reader, t *v1.GitTarget) (*worker.ApplyTrigger, string, error) {
	ref := t.Spec.ApplyTriggerRef
	if ref == nil {
		return nil, "", nil
	}
	var ft v1.FluxTrigger
	if err := c.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: ref.Name}, &ft); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("FluxTrigger %s/%s named by spec.applyTriggerRef does not exist: create it, or remove applyTriggerRef", t.Namespace, ref.Name), nil
		}
		return nil, "", fmt.Errorf("read FluxTrigger %s/%s: %w", t.Namespace, ref.Name, err)
	}
	ns := ft.Spec.KustomizationRef.Namespace
	if ns == "" {
		ns = ft.Namespace
	}
	return &worker.ApplyTrigger{Kind: ref.Kind, Namespace: ns, Name: ft.Spec.KustomizationRef.Name}, "", nil
}

// reportApplied sets the Applied condition from the worker's state of the target's
// applies; it is absent when the target names no applier.
func reportApplied(conds conditions, t *v1.GitTarget, missing string, st worker.ApplyStatus, named bool) {
	switch {
	case t.Spec.ApplyTriggerRef == nil:
		meta.RemoveStatusCondition(conds.list, ConditionApplied)
	case missing != "":
		conds.set(ConditionApplied, false, ReasonTriggerNotFound, missing+"; the folder is mirrored without asking an applier")
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

func orNone(s string) string {
	if s == "" {
		return "nothing yet"
	}
	return s
}
