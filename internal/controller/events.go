package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// recordTransitions emits a Kubernetes Event on the GitTarget when its Ready condition
// changes status or reason (a refusal, a conflict, a recovery) and on its first push, so
// that `kubectl describe` and event-based alerting see what happened.
func (r *GitTargetReconciler) recordTransitions(before, after *v1.GitTarget) {
	if r.Events == nil {
		return
	}
	was := meta.FindStatusCondition(before.Status.Conditions, v1.ConditionReady)
	now := meta.FindStatusCondition(after.Status.Conditions, v1.ConditionReady)
	if now != nil && (was == nil || was.Status != now.Status || was.Reason != now.Reason) {
		kind := corev1.EventTypeWarning
		if now.Status == "True" {
			kind = corev1.EventTypeNormal
		}
		r.Events.Eventf(after, nil, kind, now.Reason, "Reconcile", "%s", now.Message)
	}
	if before.Status.LastPushTime == nil && after.Status.LastPushTime != nil {
		r.Events.Eventf(after, nil, corev1.EventTypeNormal, "FirstPush", "Push", "first push to branch %s: %s", after.Spec.Branch, shortSHA(after.Status.LastCommit))
	}
}
