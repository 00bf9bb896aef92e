package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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

// ruleRequeue refreshes a rule's view of its target now and then.
const ruleRequeue = 30 * time.Second

// WatchRuleReconciler reports whether a WatchRule's resources resolve and its target is
// ready. The GitTarget reconciler runs the streams the rule claims.
type WatchRuleReconciler struct {
	client.Client
	Catalog *watch.Catalog
	// Access decides what the rule's service account may have mirrored.
	Access *watch.Access
	// Sensitive names the types written only encrypted.
	Sensitive watch.SensitiveTypes
	// Recheck carries requests to look at rules again when the catalog changes.
	Recheck chan event.GenericEvent
}

func (r *WatchRuleReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.WatchRule{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.GitTarget{}, handler.EnqueueRequestsFromMapFunc(r.rulesOfTarget)).
		WatchesRawSource(source.Channel(r.Recheck, &handler.EnqueueRequestForObject{})).
		Named("watchrule").
		Complete(r)
}

func (r *WatchRuleReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rule v1.WatchRule
	if err := r.Get(ctx, req.NamespacedName, &rule); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	orig := rule.DeepCopy()
	claims, unresolved, err := watch.CompileWatchRule(&rule, r.Catalog)
	target := client.ObjectKey{Namespace: rule.Namespace, Name: rule.Spec.TargetRef.Name}
	unresolved = append(unresolved, plaintextSecretsNote(ctx, r.Client, r.Sensitive, target, claims)...)
	conds := conditions{list: &rule.Status.Conditions, generation: rule.Generation}
	reportRule(ctx, r.Client, conds, err, unresolved, target)
	r.reportAccess(ctx, conds, &rule, claims, err)
	rule.Status.ObservedGeneration = rule.Generation
	if err := r.Status().Patch(ctx, &rule, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update status of WatchRule %s: %w", req.NamespacedName, err)
	}
	return reconcile.Result{RequeueAfter: ruleRequeue}, nil
}

// reportAccess sets Authorized from what the rule's service account may read. A forbidden
// resource, or a question the authorizer did not answer, also makes a rule that was Ready
// not Ready; a rule not Ready for another reason keeps that reason.
func (r *WatchRuleReconciler) reportAccess(ctx context.Context, conds conditions, rule *v1.WatchRule, claims []watch.Claim, compileErr error) {
	sa := r.Access.ServiceAccountOf(rule)
	if sa == "" || compileErr != nil {
		meta.RemoveStatusCondition(conds.list, v1.ConditionAuthorized)
		return
	}
	kept, forbidden, err := r.Access.Filter(ctx, rule, claims)
	ready := meta.IsStatusConditionTrue(*conds.list, v1.ConditionReady)
	switch {
	case err != nil:
		msg := fmt.Sprintf("could not check the rights of service account %q: %s; retrying", sa, err)
		conds.set(v1.ConditionAuthorized, false, ReasonAccessUnknown, msg)
		if ready {
			conds.ready(false, ReasonAccessUnknown, msg, false)
		}
	case len(forbidden) > 0:
		msg := strings.Join(forbidden, "; ")
		if len(kept) > 0 {
			msg += "; the rule's other resources are mirrored"
		}
		conds.set(v1.ConditionAuthorized, false, ReasonForbidden, msg)
		if ready {
			// Only a person can grant the right: stalled, not reconciling.
			conds.ready(false, ReasonForbidden, msg, true)
		}
	case len(claims) == 0:
		conds.set(v1.ConditionAuthorized, true, ReasonReady, fmt.Sprintf("the rule names no resource served now; service account %q is asked once it does", sa))
	default:
		conds.set(v1.ConditionAuthorized, true, ReasonReady, fmt.Sprintf("service account %q may list and watch every resource of the rule", sa))
	}
}

func (r *WatchRuleReconciler) rulesOfTarget(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1.WatchRuleList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.TargetRef.Name == o.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// reportRule sets a rule's conditions: Validated from its compilation, Ready from that and
// its target's Ready condition.
func reportRule(ctx context.Context, c client.Reader, conds conditions, compileErr error, unresolved []string, target client.ObjectKey) {
	switch {
	case compileErr != nil:
		msg := compileErr.Error()
		conds.set(v1.ConditionValidated, false, ReasonResourcesUnresolved, msg)
		conds.ready(false, ReasonResourcesUnresolved, msg, true)
		return
	case len(unresolved) > 0:
		msg := strings.Join(unresolved, "; ")
		conds.set(v1.ConditionValidated, false, ReasonResourcesUnresolved, msg)
		conds.ready(false, ReasonResourcesUnresolved, msg, false)
		return
	}
	conds.set(v1.ConditionValidated, true, ReasonReady, "every resource of the rule is served by the API server")
	var t v1.GitTarget
	if err := c.Get(ctx, target, &t); err != nil {
		msg := fmt.Sprintf("GitTarget %s named by spec.targetRef cannot be read: %s", target, reasonOf(err))
		conds.ready(false, ReasonTargetNotFound, msg, apierrors.IsNotFound(err))
		return
	}
	for _, cond := range t.Status.Conditions {
		if cond.Type == v1.ConditionReady && cond.Status == "True" {
			conds.ready(true, ReasonReady, fmt.Sprintf("mirrored by GitTarget %s", target), false)
			return
		}
		if cond.Type == v1.ConditionReady {
			conds.ready(false, ReasonTargetNotReady, fmt.Sprintf("GitTarget %s is not ready: %s", target, cond.Message), false)
			return
		}
	}
	conds.ready(false, ReasonTargetNotReady, fmt.Sprintf("GitTarget %s has not reported yet", target), false)
}
