package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
)

// ClusterWatchRuleReconciler reports whether a ClusterWatchRule's resources resolve and its
// target is ready.
type ClusterWatchRuleReconciler struct {
	client.Client
	Catalog *watch.Catalog
	// Sensitive names the types written only encrypted.
	Sensitive watch.SensitiveTypes
	Recheck   chan event.GenericEvent
}

func (r *ClusterWatchRuleReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.ClusterWatchRule{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.GitTarget{}, handler.EnqueueRequestsFromMapFunc(r.rulesOfTarget)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allRules), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WatchesRawSource(source.Channel(r.Recheck, &handler.EnqueueRequestForObject{})).
		Named("clusterwatchrule").
		Complete(r)
}

func (r *ClusterWatchRuleReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rule v1.ClusterWatchRule
	if err := r.Get(ctx, req.NamespacedName, &rule); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	orig := rule.DeepCopy()
	nss, err := namespaceInfos(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	claims, unresolved, cerr := watch.CompileClusterWatchRule(&rule, r.Catalog, nss)
	target := client.ObjectKey{Namespace: rule.Spec.TargetRef.Namespace, Name: rule.Spec.TargetRef.Name}
	unresolved = append(unresolved, plaintextSecretsNote(ctx, r.Client, r.Sensitive, target, claims)...)
	conds := conditions{list: &rule.Status.Conditions, generation: rule.Generation}
	reportRule(ctx, r.Client, conds, cerr, unresolved, target)
	rule.Status.ObservedGeneration = rule.Generation
	if err := r.Status().Patch(ctx, &rule, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update status of ClusterWatchRule %s: %w", req.Name, err)
	}
	return reconcile.Result{RequeueAfter: ruleRequeue}, nil
}

func (r *ClusterWatchRuleReconciler) rulesOfTarget(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1.ClusterWatchRuleList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		ref := list.Items[i].Spec.TargetRef
		if ref.Name == o.GetName() && ref.Namespace == o.GetNamespace() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

func (r *ClusterWatchRuleReconciler) allRules(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1.ClusterWatchRuleList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}
