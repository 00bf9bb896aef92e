package controller

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/route"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
)

// runStreams compiles the rules naming t and makes the hub run exactly the streams they
// claim. Subscriptions that are new or changed deliver snapshots, which the target's gate
// gathers into one resync.
func (r *GitTargetReconciler) runStreams(ctx context.Context, t *v1.GitTarget, sealer *targetSealer) *problem {
	name := client.ObjectKeyFromObject(t).String()
	claims, err := claimsOfTarget(ctx, r.Client, r.Pipeline.Catalog, r.Pipeline.Access, t)
	if err != nil {
		return &problem{condition: v1.ConditionStreamsRunning, reason: ReasonStreamsStarting, transient: true, message: err.Error()}
	}
	var seal route.Sealer // stays a nil interface without encryption
	if sealer != nil {
		seal = sealer
	} else {
		claims = withoutSensitive(claims, r.Pipeline.Sensitive)
	}
	wanted := r.Pipeline.Router.Wanted(name, watch.MergeClaims(claims), seal)
	r.Pipeline.Router.Expect(name, wanted, r.Pipeline.Hub.Changed(name, wanted))
	r.Pipeline.Hub.Set(name, wanted)
	return nil
}

func streamsMessage(n int) string {
	if n == 0 {
		return "no WatchRule or ClusterWatchRule names this target yet"
	}
	return fmt.Sprintf("%d stream(s) watching", n)
}

// allTargets maps any object to every GitTarget.
func (r *GitTargetReconciler) allTargets(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1.GitTargetList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// targetsOfSecret maps a Secret to the GitTargets whose provider names it (a rotated
// credential replaces the branch's worker).
func (r *GitTargetReconciler) targetsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var providers v1.GitProviderList
	if err := r.List(ctx, &providers, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	named := false
	for i := range providers.Items {
		named = named || namesSecret(&providers.Items[i], o.GetName())
	}
	if !named {
		return nil
	}
	return r.allTargets(ctx, o)
}

// targetsOfTrigger maps a trigger of kind to the GitTargets of its namespace that name it.
func (r *GitTargetReconciler) targetsOfTrigger(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list v1.GitTargetList
		if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for i := range list.Items {
			if namesTrigger(&list.Items[i], kind, o.GetName()) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return reqs
	}
}

func targetOfWatchRule(_ context.Context, o client.Object) []reconcile.Request {
	wr, ok := o.(*v1.WatchRule)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: wr.Namespace, Name: wr.Spec.TargetRef.Name}}}
}

func targetOfClusterWatchRule(_ context.Context, o client.Object) []reconcile.Request {
	cr, ok := o.(*v1.ClusterWatchRule)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: cr.Spec.TargetRef.Namespace, Name: cr.Spec.TargetRef.Name}}}
}

// targetRef is a GitTarget object naming "namespace/name", for a reconcile request.
func targetRef(name string) *v1.GitTarget {
	t := &v1.GitTarget{}
	t.Namespace, t.Name = splitName(name)
	return t
}

// splitName splits "namespace/name".
func splitName(s string) (namespace, name string) {
	ns, n, _ := strings.Cut(s, "/")
	return ns, n
}
