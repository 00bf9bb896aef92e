package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// AuthorAttributed is True only for a commit authored by a resolved Kubernetes user.
func TestAuthorAttributedIsTrueOnlyForAResolvedAuthor(t *testing.T) {
	alice := worker.Author{Name: "alice", Email: "alice@example.com"}
	cases := []struct {
		name       string
		attributed bool
		res        worker.SaveResult
		status     metav1.ConditionStatus
		reason     string
	}{
		{"attribution off", false, worker.SaveResult{Author: alice}, metav1.ConditionFalse, ReasonAttributionOff},
		{"a resync's commit", true, worker.SaveResult{Author: alice, ByCommitter: true}, metav1.ConditionFalse, ReasonAuthorUnresolved},
		{"no audit event in time", true, worker.SaveResult{Author: worker.Author{Name: attribution.UnresolvedName, Email: attribution.UnresolvedEmail}}, metav1.ConditionFalse, ReasonAuthorUnresolved},
		{"a resolved user", true, worker.SaveResult{Author: alice}, metav1.ConditionTrue, ReasonAttributed},
	}
	for _, c := range cases {
		var list []metav1.Condition
		r := &CommitRequestReconciler{Attributed: c.attributed}
		r.reportAuthor(conditions{list: &list, generation: 1}, c.res)
		got := meta.FindStatusCondition(list, v1.ConditionAuthorAttributed)
		if got == nil || got.Status != c.status || got.Reason != c.reason {
			t.Errorf("%s: AuthorAttributed = %+v, want %s/%s", c.name, got, c.status, c.reason)
		}
	}
}
