package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
)

// verdictFor decides the branch ownership (docs/branch-ownership.md#who-owns-a-branch) from
// every GitTarget of the cluster and returns the verdict of t.
func verdictFor(ctx context.Context, c client.Reader, t *v1.GitTarget) (ownership.Verdict, error) {
	var targets v1.GitTargetList
	if err := c.List(ctx, &targets); err != nil {
		return ownership.Verdict{}, fmt.Errorf("list GitTargets: %w", err)
	}
	providers := map[types.NamespacedName]*v1.GitProvider{}
	var claims []ownership.Claim
	for i := range targets.Items {
		other := &targets.Items[i]
		if !other.DeletionTimestamp.IsZero() {
			continue
		}
		key := providerKey(other)
		p, ok := providers[key]
		if !ok {
			var got v1.GitProvider
			if err := c.Get(ctx, key, &got); err == nil {
				p = &got
			}
			providers[key] = p
		}
		if p == nil {
			continue // a target without provider claims nothing
		}
		nsLabels, _ := namespaceLabels(ctx, c, other.Namespace)
		admitted, _ := admits(p, other.Namespace, nsLabels)
		claims = append(claims, ownership.Claim{
			Target:   client.ObjectKeyFromObject(other),
			Created:  other.CreationTimestamp.Time,
			Provider: key,
			URL:      p.Spec.URL,
			Branch:   other.Spec.Branch,
			Path:     other.Spec.Path,
			Admitted: admitted && ownership.BranchAllowed(p.Spec.AllowedBranches, other.Spec.Branch),
		})
	}
	verdicts, err := ownership.DecideOwnership(claims)
	if err != nil {
		return ownership.Verdict{}, err
	}
	self := client.ObjectKeyFromObject(t)
	for _, v := range verdicts {
		if v.Target == self {
			return v, nil
		}
	}
	return ownership.Verdict{}, fmt.Errorf("GitTarget %s has no ownership verdict", self)
}
