package watch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// accessTTL is how long an answer of the API server's authorizer is reused: a Role granted
// or taken away shows within it (docs/tenancy.md#when-rights-change).
const accessTTL = 20 * time.Second

// accessCacheMax bounds the answers kept; past it, expired ones are dropped first and then
// everything.
const accessCacheMax = 10000

// AccessReviewer creates SubjectAccessReviews (a controller-runtime client does).
type AccessReviewer interface {
	Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error
}

// Access decides which claims of a WatchRule its service account may have: the account's
// rights to list and watch each resource in the rule's namespace, asked of the API
// server's authorizer (docs/tenancy.md). A rule without spec.serviceAccountName has the
// rights of DefaultServiceAccount of its namespace when that is set (lockdown), else the
// operator's own. Safe for concurrent use.
type Access struct {
	reviewer AccessReviewer
	// defaultServiceAccount is --default-service-account ("" for none).
	defaultServiceAccount string
	now                   func() time.Time

	mu      sync.Mutex
	answers map[accessQuestion]accessAnswer
}

// accessQuestion is one question put to the authorizer.
type accessQuestion struct {
	user, namespace string
	gr              schema.GroupResource
	verb            string
}

type accessAnswer struct {
	allowed bool
	at      time.Time
}

// NewAccess returns the rights of WatchRules, asked through reviewer.
func NewAccess(reviewer AccessReviewer, defaultServiceAccount string) *Access {
	return &Access{reviewer: reviewer, defaultServiceAccount: defaultServiceAccount, now: time.Now,
		answers: map[accessQuestion]accessAnswer{}}
}

// ServiceAccountOf is the service account whose rights rule has, "" for the operator's.
func (a *Access) ServiceAccountOf(rule *v1alpha1.WatchRule) string {
	if rule.Spec.ServiceAccountName != "" {
		return rule.Spec.ServiceAccountName
	}
	if a == nil {
		return ""
	}
	return a.defaultServiceAccount
}

// Filter keeps the claims of rule its service account may list and watch. forbidden says,
// for each resource dropped, who may not read it and what to do. An error of the
// authorizer keeps nothing: the caller retries, and never mirrors on a guess.
func (a *Access) Filter(ctx context.Context, rule *v1alpha1.WatchRule, claims []Claim) (kept []Claim, forbidden []string, err error) {
	sa := a.ServiceAccountOf(rule)
	if sa == "" {
		return claims, nil, nil
	}
	if a == nil {
		return nil, nil, fmt.Errorf("the rights of service account %q cannot be checked: no authorizer is wired", sa)
	}
	user := serviceAccountUser(rule.Namespace, sa)
	for _, c := range claims {
		ok, err := a.mayRead(ctx, user, rule.Namespace, c.Resource.GVR.GroupResource())
		if err != nil {
			return nil, nil, err
		}
		if ok {
			kept = append(kept, c)
			continue
		}
		forbidden = append(forbidden, fmt.Sprintf("service account %q may not list and watch %s in namespace %q: grant it a Role with get, list and watch on them, or take them out of the rule",
			sa, describeResource(c.Resource.GVR.GroupResource()), rule.Namespace))
	}
	return kept, forbidden, nil
}

// mayRead reports whether user may both list and watch gr in namespace.
func (a *Access) mayRead(ctx context.Context, user, namespace string, gr schema.GroupResource) (bool, error) {
	for _, verb := range []string{"list", "watch"} {
		ok, err := a.allowed(ctx, accessQuestion{user: user, namespace: namespace, gr: gr, verb: verb})
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// allowed answers q from the cache or the authorizer.
func (a *Access) allowed(ctx context.Context, q accessQuestion) (bool, error) {
	now := a.now()
	a.mu.Lock()
	ans, ok := a.answers[q]
	a.mu.Unlock()
	if ok && now.Sub(ans.at) < accessTTL {
		return ans.allowed, nil
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   q.user,
		Groups: serviceAccountGroups(q.namespace),
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: q.namespace, Verb: q.verb, Group: q.gr.Group, Resource: q.gr.Resource,
		},
	}}
	if err := a.reviewer.Create(ctx, review); err != nil {
		return false, fmt.Errorf("ask the API server whether %s may %s %s: %w", q.user, q.verb, describeResource(q.gr), err)
	}
	st := review.Status
	if !st.Allowed && !st.Denied && st.EvaluationError != "" {
		// An authorizer failed to answer: no decision, not a denial.
		return false, fmt.Errorf("the API server could not decide whether %s may %s %s: %s", q.user, q.verb, describeResource(q.gr), st.EvaluationError)
	}
	allowed := st.Allowed && !st.Denied
	a.remember(q, accessAnswer{allowed: allowed, at: now})
	return allowed, nil
}

func (a *Access) remember(q accessQuestion, ans accessAnswer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.answers) >= accessCacheMax {
		for k, v := range a.answers {
			if ans.at.Sub(v.at) >= accessTTL {
				delete(a.answers, k)
			}
		}
		if len(a.answers) >= accessCacheMax {
			clear(a.answers)
		}
	}
	a.answers[q] = ans
}

// serviceAccountUser is the user name the API server gives a service account.
func serviceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// serviceAccountGroups are the groups every service account of namespace is in, so that
// bindings to them count as they would for the account's own requests.
func serviceAccountGroups(namespace string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
}

func describeResource(gr schema.GroupResource) string {
	if gr.Group == "" {
		return strings.ToLower(gr.Resource)
	}
	return gr.Resource + "." + gr.Group
}
