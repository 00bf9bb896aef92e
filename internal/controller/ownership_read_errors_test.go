package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/kubescheme"
)

// Two GitTargets write one branch through two providers of one repository; the older one
// owns it. A read of the older one's provider or namespace that fails for a moment must not
// hand the branch to the younger one: verdictFor answers with an error instead.
func TestATransientReadErrorDoesNotMoveBranchOwnership(t *testing.T) {
	selector := &v1.NamespaceMatcher{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"mirror": "yes"}}}
	provider := func(ns, name string) *v1.GitProvider {
		return &v1.GitProvider{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       v1.GitProviderSpec{URL: "https://git.example.com/org/repo.git", AllowedBranches: []string{"main"}, AccessFrom: selector},
		}
	}
	target := func(ns, name, provider string, created time.Time) *v1.GitTarget {
		return &v1.GitTarget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(created)},
			Spec:       v1.GitTargetSpec{GitProviderRef: v1.GitProviderReference{Name: provider}, Branch: "main", Path: name},
		}
	}
	now := time.Now()
	older := target("team-a", "older", "git-a", now.Add(-time.Hour))
	younger := target("team-b", "younger", "git-b", now)
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"mirror": "yes"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"mirror": "yes"}}},
		provider("team-a", "git-a"), provider("team-b", "git-b"), older, younger,
	}
	scheme, err := kubescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	unavailable := apierrors.NewServiceUnavailable("etcd is catching up")
	cases := []struct {
		name string
		// fails reports whether a Get of this object fails.
		fails func(client.Object, client.ObjectKey) bool
	}{
		{"the older target's provider cannot be read", func(o client.Object, k client.ObjectKey) bool {
			_, isProvider := o.(*v1.GitProvider)
			return isProvider && k.Name == "git-a"
		}},
		{"the older target's namespace cannot be read", func(o client.Object, k client.ObjectKey) bool {
			_, isNamespace := o.(*corev1.Namespace)
			return isNamespace && k.Name == "team-a"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			healthy := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
			before, err := verdictFor(context.Background(), healthy, younger)
			if err != nil || !before.Conflict {
				t.Fatalf("with every read answered, the younger target's verdict = %+v, %v; want a conflict", before, err)
			}
			flaky := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if c.fails(obj, key) {
						return unavailable
					}
					return cl.Get(ctx, key, obj, opts...)
				},
			}).Build()
			got, err := verdictFor(context.Background(), flaky, younger)
			if err == nil {
				t.Fatalf("verdictFor decided %+v from a failed read; want an error", got)
			}
			if !apierrors.IsServiceUnavailable(err) {
				t.Errorf("the error lost its cause: %v", err)
			}
		})
	}
}
