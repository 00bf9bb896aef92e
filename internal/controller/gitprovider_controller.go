package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
)

// remoteProbeTimeout bounds the reachability check of a GitProvider's remote.
const remoteProbeTimeout = 30 * time.Second

// GitProviderReconciler reports whether a GitProvider can be used: its Secret holds usable
// credentials, its signing key parses, and its remote answers with those credentials.
type GitProviderReconciler struct {
	client.Client
	// ProbeDir is where the reachability check keeps its throwaway local copies.
	ProbeDir string
}

// SetupWithManager registers the reconciler; a change of a Secret a provider names
// reconciles the provider.
func (r *GitProviderReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.GitProvider{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Metadata only: a Secret's data is never cached (docs/security.md#secrets-are-not-cached).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.providersNamingSecret), builder.OnlyMetadata).
		Named("gitprovider").
		Complete(r)
}

func (r *GitProviderReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var p v1.GitProvider
	if err := r.Get(ctx, req.NamespacedName, &p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	orig := p.DeepCopy()
	conds := conditions{list: &p.Status.Conditions, generation: p.Generation}
	prob := r.check(ctx, &p)
	if prob != nil && prob.transient {
		return reconcile.Result{}, prob // retried with backoff; status unchanged
	}
	var after time.Duration
	switch {
	case prob == nil:
		conds.set(v1.ConditionValidated, true, ReasonReady, "credentials are readable and the remote answers")
		conds.ready(true, ReasonReady, "the remote answers with these credentials", false)
		after = 10 * time.Minute
	default:
		conds.set(prob.condition, false, prob.reason, prob.message)
		if prob.condition != v1.ConditionValidated {
			conds.set(v1.ConditionValidated, true, ReasonReady, "credentials are readable")
		}
		conds.ready(false, prob.reason, prob.message, prob.stalled)
		after = 30 * time.Second
	}
	p.Status.ObservedGeneration = p.Generation
	if err := r.Status().Patch(ctx, &p, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update status of GitProvider %s: %w", req.NamespacedName, err)
	}
	return reconcile.Result{RequeueAfter: after}, nil
}

// check returns what keeps the provider from being usable, or nil.
func (r *GitProviderReconciler) check(ctx context.Context, p *v1.GitProvider) *problem {
	creds, prob := readCredentials(ctx, r.Client, p)
	if prob != nil {
		return prob
	}
	pem, prob := readSigningKey(ctx, r.Client, p)
	if prob != nil {
		return prob
	}
	p.Status.SigningPublicKey = ""
	if pem != nil {
		signer, err := gitrepo.NewCommitSigner(pem)
		if err == nil {
			p.Status.SigningPublicKey = signer.PublicKey()
		}
	}
	return r.probeRemote(ctx, p, creds)
}

// probeRemote asks the remote for a branch with the provider's credentials.
func (r *GitProviderReconciler) probeRemote(ctx context.Context, p *v1.GitProvider, creds gitrepo.Credentials) *problem {
	dir, err := os.MkdirTemp(r.ProbeDir, "probe-")
	if err != nil {
		return &problem{condition: v1.ConditionReady, reason: ReasonRemoteUnreachable, message: fmt.Sprintf("no scratch space to probe the remote: %v", err)}
	}
	defer os.RemoveAll(dir)
	repo, err := gitrepo.Open(dir, p.Spec.URL, creds)
	if errors.Is(err, gitrepo.ErrInsecureTransport) {
		return &problem{condition: v1.ConditionValidated, reason: ReasonInsecureTransport, stalled: true, message: err.Error()}
	}
	if err != nil {
		return &problem{condition: v1.ConditionValidated, reason: ReasonSecretInvalid, stalled: true, message: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, remoteProbeTimeout)
	defer cancel()
	if _, err := repo.RemoteTip(ctx, probeBranch(p.Spec.AllowedBranches)); err != nil {
		return &problem{condition: v1.ConditionReady, reason: ReasonRemoteUnreachable,
			message: fmt.Sprintf("the remote does not answer with these credentials: %v (retrying)", err)}
	}
	return nil
}

// probeBranch picks a branch name to ask the remote about; only the answer matters.
func probeBranch(allowed []string) string {
	for _, b := range allowed {
		if !containsGlob(b) {
			return b
		}
	}
	return "main"
}

func containsGlob(s string) bool {
	for _, c := range s {
		if c == '*' || c == '?' || c == '[' {
			return true
		}
	}
	return false
}

// providersNamingSecret maps a Secret to the GitProviders of its namespace that name it.
func (r *GitProviderReconciler) providersNamingSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1.GitProviderList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, p := range list.Items {
		if namesSecret(&p, o.GetName()) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
		}
	}
	return reqs
}

func namesSecret(p *v1.GitProvider, name string) bool {
	return (p.Spec.SecretRef != nil && p.Spec.SecretRef.Name == name) ||
		(p.Spec.Commit.Signing != nil && p.Spec.Commit.Signing.SecretRef.Name == name)
}
