package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
)

// verdictFor decides the branch ownership (docs/branch-ownership.md#who-owns-a-branch) from
// every GitTarget of the cluster and returns the verdict of t.
//
// It decides only from reads that succeeded: a provider or namespace that could not be read
// is an error, never "absent", so a passing API server hiccup cannot hand an older target's
// branch to a younger one (docs/branch-ownership.md#read-errors).
func verdictFor(ctx context.Context, c client.Reader, t *v1.GitTarget) (ownership.Verdict, error) {
	var targets v1.GitTargetList
	if err := c.List(ctx, &targets); err != nil {
		return ownership.Verdict{}, fmt.Errorf("list GitTargets: %w", err)
	}
	providers := map[types.NamespacedName]*v1.GitProvider{}
	labels := map[string]map[string]string{} // per namespace, read once
	var claims []ownership.Claim
	for i := range targets.Items {
		other := &targets.Items[i]
		if !other.DeletionTimestamp.IsZero() {
			continue
		}
		key := providerKey(other)
		p, ok := providers[key]
		if !ok {
			var err error
			if p, err = providerOf(ctx, c, key); err != nil {
				return ownership.Verdict{}, fmt.Errorf("read GitProvider %s of GitTarget %s/%s: %w", key, other.Namespace, other.Name, err)
			}
			providers[key] = p
		}
		if p == nil {
			continue // a target without provider claims nothing
		}
		nsLabels, ok := labels[other.Namespace]
		if !ok {
			var err error
			if nsLabels, err = namespaceLabels(ctx, c, other.Namespace); err != nil {
				return ownership.Verdict{}, fmt.Errorf("read the labels of namespace %s: %w", other.Namespace, err)
			}
			labels[other.Namespace] = nsLabels
		}
		// A selector the API server accepted but that does not parse admits nothing; that
		// target reports it itself.
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

// providerOf reads a GitProvider; nil without error when it does not exist.
func providerOf(ctx context.Context, c client.Reader, key types.NamespacedName) (*v1.GitProvider, error) {
	var p v1.GitProvider
	if err := c.Get(ctx, key, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &p, nil
}
