package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
)

// rulesOf lists the WatchRules and ClusterWatchRules that name target t.
func rulesOf(ctx context.Context, c client.Reader, t *v1.GitTarget) ([]v1.WatchRule, []v1.ClusterWatchRule, error) {
	var wrs v1.WatchRuleList
	if err := c.List(ctx, &wrs, client.InNamespace(t.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("list WatchRules: %w", err)
	}
	var cwrs v1.ClusterWatchRuleList
	if err := c.List(ctx, &cwrs); err != nil {
		return nil, nil, fmt.Errorf("list ClusterWatchRules: %w", err)
	}
	var rules []v1.WatchRule
	for _, r := range wrs.Items {
		if r.Spec.TargetRef.Name == t.Name && r.DeletionTimestamp.IsZero() {
			rules = append(rules, r)
		}
	}
	var cluster []v1.ClusterWatchRule
	for _, r := range cwrs.Items {
		if r.Spec.TargetRef.Name == t.Name && r.Spec.TargetRef.Namespace == t.Namespace && r.DeletionTimestamp.IsZero() {
			cluster = append(cluster, r)
		}
	}
	return rules, cluster, nil
}

// namespaceInfos lists every namespace with its labels, for namespace selectors.
func namespaceInfos(ctx context.Context, c client.Reader) ([]watch.NamespaceInfo, error) {
	var list corev1.NamespaceList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	infos := make([]watch.NamespaceInfo, 0, len(list.Items))
	for _, n := range list.Items {
		infos = append(infos, watch.NamespaceInfo{Name: n.Name, Labels: n.Labels})
	}
	return infos, nil
}

// claimsOfTarget compiles every rule naming t. Rules that do not compile are reported on
// their own status by their reconcilers; here they only contribute what resolved, and of a
// WatchRule only what its service account may read (access).
func claimsOfTarget(ctx context.Context, c client.Reader, cat watch.ResourceLister, access *watch.Access, t *v1.GitTarget) ([]watch.Claim, error) {
	rules, cluster, err := rulesOf(ctx, c, t)
	if err != nil {
		return nil, err
	}
	var claims []watch.Claim
	for i := range rules {
		got, _, err := watch.CompileWatchRule(&rules[i], cat)
		if err != nil {
			continue
		}
		permitted, _, err := access.Filter(ctx, &rules[i], got)
		if err != nil {
			return nil, err
		}
		claims = append(claims, permitted...)
	}
	if len(cluster) > 0 {
		nss, err := namespaceInfos(ctx, c)
		if err != nil {
			return nil, err
		}
		for i := range cluster {
			got, _, err := watch.CompileClusterWatchRule(&cluster[i], cat, nss)
			if err == nil {
				claims = append(claims, got...)
			}
		}
	}
	return claims, nil
}

// plaintextSecretsNote tells a rule's author that its claim on Secrets is not mirrored:
// its target has no encryption.
func plaintextSecretsNote(ctx context.Context, c client.Reader, sensitive watch.SensitiveTypes, target client.ObjectKey, claims []watch.Claim) []string {
	if len(withoutSensitive(append([]watch.Claim(nil), claims...), sensitive)) == len(claims) {
		return nil
	}
	var t v1.GitTarget
	if c.Get(ctx, target, &t) == nil && t.Spec.Encryption != nil {
		return nil // the target's EncryptionConfigured condition tells the rest
	}
	return []string{"secrets are mirrored only by a GitTarget with spec.encryption (nothing is ever written in plaintext); see the target's EncryptionConfigured condition"}
}

// withoutSensitive drops claims on sensitive types (Secrets, --sensitive-types) for a
// target without encryption: they are mirrored only encrypted. Nothing is ever written in
// plaintext.
func withoutSensitive(claims []watch.Claim, sensitive watch.SensitiveTypes) []watch.Claim {
	kept := claims[:0]
	for _, c := range claims {
		if sensitive.Has(c.Resource) {
			continue
		}
		kept = append(kept, c)
	}
	return kept
}
