package watch

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// authorizer answers SubjectAccessReviews from a table of "user verb resource" and counts
// the questions; a pure stand-in for the API server's authorizer in unit tests of Access
// (the real one is in internal/controller/tenancy_e2e_test.go).
type authorizer struct {
	allowed map[string]bool
	status  *authorizationv1.SubjectAccessReviewStatus
	asked   int
}

func (a *authorizer) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	a.asked++
	r := obj.(*authorizationv1.SubjectAccessReview)
	if a.status != nil {
		r.Status = *a.status
		return nil
	}
	ra := r.Spec.ResourceAttributes
	r.Status.Allowed = a.allowed[r.Spec.User+" "+ra.Verb+" "+ra.Resource]
	return nil
}

func ruleWith(sa string) *v1alpha1.WatchRule {
	return &v1alpha1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "r"}, Spec: v1alpha1.WatchRuleSpec{ServiceAccountName: sa}}
}

func claimOn(resource string) Claim {
	return Claim{Resource: Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: resource}, Namespaced: true}, Namespaces: []string{"team"}}
}

func TestAccessKeepsWhatTheServiceAccountMayListAndWatch(t *testing.T) {
	user := "system:serviceaccount:team:mirror"
	auth := &authorizer{allowed: map[string]bool{
		user + " list configmaps": true, user + " watch configmaps": true,
		user + " list secrets": true, // list alone is not enough
	}}
	a := NewAccess(auth, "")
	kept, forbidden, err := a.Filter(context.Background(), ruleWith("mirror"), []Claim{claimOn("configmaps"), claimOn("secrets")})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].Resource.GVR.Resource != "configmaps" {
		t.Fatalf("kept %+v, want the ConfigMaps claim only", kept)
	}
	if len(forbidden) != 1 || !strings.Contains(forbidden[0], `"mirror"`) || !strings.Contains(forbidden[0], "secrets") {
		t.Fatalf("forbidden %q, want one message naming the account and secrets", forbidden)
	}
}

func TestAccessWithoutAServiceAccountAsksNothing(t *testing.T) {
	auth := &authorizer{}
	claims := []Claim{claimOn("secrets")}
	kept, forbidden, err := NewAccess(auth, "").Filter(context.Background(), ruleWith(""), claims)
	if err != nil || len(kept) != 1 || forbidden != nil || auth.asked != 0 {
		t.Fatalf("kept %v, forbidden %v, err %v, asked %d; want the claims as they are and no question", kept, forbidden, err, auth.asked)
	}
}

func TestAccessUnderLockdownUsesTheDefaultServiceAccount(t *testing.T) {
	auth := &authorizer{allowed: map[string]bool{}}
	a := NewAccess(auth, "mirror")
	if got := a.ServiceAccountOf(ruleWith("")); got != "mirror" {
		t.Fatalf("service account %q, want the default", got)
	}
	if got := a.ServiceAccountOf(ruleWith("reader")); got != "reader" {
		t.Fatalf("service account %q, want the rule's own", got)
	}
	kept, _, err := a.Filter(context.Background(), ruleWith(""), []Claim{claimOn("configmaps")})
	if err != nil || len(kept) != 0 {
		t.Fatalf("kept %v, err %v; want nothing for an account without rights", kept, err)
	}
}

func TestAccessReusesAnswersForTheirTTL(t *testing.T) {
	user := "system:serviceaccount:team:mirror"
	auth := &authorizer{allowed: map[string]bool{user + " list configmaps": true, user + " watch configmaps": true}}
	a := NewAccess(auth, "")
	now := time.Unix(1000, 0)
	a.now = func() time.Time { return now }
	filter := func() {
		t.Helper()
		if _, _, err := a.Filter(context.Background(), ruleWith("mirror"), []Claim{claimOn("configmaps")}); err != nil {
			t.Fatal(err)
		}
	}
	filter()
	filter()
	if auth.asked != 2 {
		t.Fatalf("asked %d times, want 2 (list and watch once)", auth.asked)
	}
	now = now.Add(accessTTL)
	filter()
	if auth.asked != 4 {
		t.Fatalf("asked %d times after the TTL, want 4", auth.asked)
	}
}

func TestAccessTreatsAnUnansweredQuestionAsAnError(t *testing.T) {
	auth := &authorizer{status: &authorizationv1.SubjectAccessReviewStatus{EvaluationError: "webhook authorizer timed out"}}
	_, _, err := NewAccess(auth, "").Filter(context.Background(), ruleWith("mirror"), []Claim{claimOn("configmaps")})
	if err == nil || !strings.Contains(err.Error(), "could not decide") {
		t.Fatalf("err %v, want an error, not a denial", err)
	}
	var nilAccess *Access
	if _, _, err := nilAccess.Filter(context.Background(), ruleWith("mirror"), []Claim{claimOn("configmaps")}); err == nil {
		t.Fatal("a nil Access let a rule with a service account through")
	}
}
