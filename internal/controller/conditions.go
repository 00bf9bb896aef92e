package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// conditions collects the conditions of one reconcile for an object of some generation.
type conditions struct {
	list       *[]metav1.Condition
	generation int64
}

func (c conditions) set(typ string, ok bool, reason, message string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(c.list, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: c.generation,
	})
}

// unknown sets a condition to Unknown: not measured yet.
func (c conditions) unknown(typ, reason, message string) {
	meta.SetStatusCondition(c.list, metav1.Condition{
		Type: typ, Status: metav1.ConditionUnknown, Reason: reason, Message: message, ObservedGeneration: c.generation,
	})
}

// ready sets Ready with its kstatus companions: Reconciling while the object works towards
// ready, Stalled when it cannot get there without a change by a person.
func (c conditions) ready(ok bool, reason, message string, stalled bool) {
	c.set(v1.ConditionReady, ok, reason, message)
	if ok {
		meta.RemoveStatusCondition(c.list, v1.ConditionReconciling)
		meta.RemoveStatusCondition(c.list, v1.ConditionStalled)
		return
	}
	if stalled {
		c.set(v1.ConditionStalled, true, reason, message)
		meta.RemoveStatusCondition(c.list, v1.ConditionReconciling)
		return
	}
	c.set(v1.ConditionReconciling, true, reason, message)
	meta.RemoveStatusCondition(c.list, v1.ConditionStalled)
}

// problem is a reason and message that keeps an object from being ready.
type problem struct {
	condition string // the specific condition it sets False, besides Ready
	reason    string
	message   string
	// stalled: only a change by a person fixes it (retrying alone will not).
	stalled bool
	// transient: reading the API failed, or a branch worker was too busy to answer; the
	// reconcile is retried with backoff, nothing is torn down, and the conditions keep
	// what they said (an event tells why nothing moved).
	transient bool
}

// workerBusy is the transient problem of a branch worker that did not take a call in time.
func workerBusy(message string) *problem {
	return &problem{reason: ReasonWorkerBusy, transient: true, message: message}
}

func (p *problem) Error() string { return p.reason + ": " + p.message }
