package controller

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// providerKey is the GitProvider a GitTarget names; its namespace defaults to the target's.
func providerKey(t *v1.GitTarget) types.NamespacedName {
	ns := t.Spec.GitProviderRef.Namespace
	if ns == "" {
		ns = t.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: t.Spec.GitProviderRef.Name}
}

// admits reports whether provider p lets GitTargets of namespace ns use it
// (docs/controllers.md#who-may-use-a-gitprovider): its own namespace always, others when
// spec.accessFrom lists them or selects their labels.
func admits(p *v1.GitProvider, ns string, nsLabels map[string]string) (bool, error) {
	if p.Namespace == ns {
		return true, nil
	}
	af := p.Spec.AccessFrom
	if af == nil {
		return false, nil
	}
	if slices.Contains(af.Namespaces, ns) {
		return true, nil
	}
	if af.NamespaceSelector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(af.NamespaceSelector)
	if err != nil {
		return false, fmt.Errorf("GitProvider %s/%s: spec.accessFrom.namespaceSelector: %w", p.Namespace, p.Name, err)
	}
	return sel.Matches(labels.Set(nsLabels)), nil
}

// namespaceLabels returns the labels of namespace ns (none when it cannot be read).
func namespaceLabels(ctx context.Context, c client.Reader, ns string) (map[string]string, error) {
	var n corev1.Namespace
	if err := c.Get(ctx, types.NamespacedName{Name: ns}, &n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return n.Labels, nil
}

// admission resolves a target's provider and checks that it admits the target.
func admission(ctx context.Context, c client.Reader, t *v1.GitTarget) (*v1.GitProvider, *problem) {
	key := providerKey(t)
	var p v1.GitProvider
	if err := c.Get(ctx, key, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &problem{condition: v1.ConditionValidated, reason: v1.ReasonProviderNotFound, stalled: true,
				message: fmt.Sprintf("GitProvider %s named by spec.gitProviderRef does not exist: create it, or point gitProviderRef at an existing one", key)}
		}
		return nil, &problem{condition: v1.ConditionValidated, reason: v1.ReasonProviderNotFound, transient: true,
			message: fmt.Sprintf("GitProvider %s cannot be read: %v", key, err)}
	}
	nsLabels, err := namespaceLabels(ctx, c, t.Namespace)
	if err != nil {
		return nil, &problem{condition: v1.ConditionValidated, reason: v1.ReasonNamespaceNotAuthorized, transient: true,
			message: fmt.Sprintf("namespace %s cannot be read to check GitProvider %s's accessFrom: %v", t.Namespace, key, err)}
	}
	ok, err := admits(&p, t.Namespace, nsLabels)
	if err != nil {
		return nil, &problem{condition: v1.ConditionValidated, reason: v1.ReasonNamespaceNotAuthorized, stalled: true, message: err.Error()}
	}
	if !ok {
		return nil, &problem{condition: v1.ConditionValidated, reason: v1.ReasonNamespaceNotAuthorized, stalled: true,
			message: fmt.Sprintf("GitProvider %s does not admit GitTargets from namespace %s: add %q to its spec.accessFrom.namespaces, or give the namespace labels its spec.accessFrom.namespaceSelector matches", key, t.Namespace, t.Namespace)}
	}
	return &p, nil
}
