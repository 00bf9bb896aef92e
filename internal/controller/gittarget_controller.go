package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// Requeue intervals of a GitTarget: soon while it works towards ready, then now and then to
// refresh the status the pipeline reports (last commit, retained documents). A change of the
// worker's state does not wait for them: the worker reports it (Pipeline.Changes).
const (
	targetRequeueNotReady = 5 * time.Second
	// DefaultStatusResync is how often a ready GitTarget's status is refreshed without a
	// change; a stalled one is looked at stalledResyncs times less often.
	DefaultStatusResync = 30 * time.Second
	stalledResyncs      = 4
	// workerCallTimeout bounds every call from a reconciler into a branch worker (status,
	// setting or removing a target, handing over a CommitRequest).
	workerCallTimeout = 10 * time.Second
)

// GitTargetReconciler validates a GitTarget, attaches it to its branch's worker, runs the
// streams its rules claim, and reports what the pipeline sees.
type GitTargetReconciler struct {
	client.Client
	Pipeline *pipeline.Pipeline
	// Events records transitions on the GitTarget (nil records none).
	Events events.EventRecorder
	// Resync is how often a ready target's status is refreshed without a change
	// (DefaultStatusResync when 0).
	Resync time.Duration
	// Retarget carries requests to reconcile GitTargets that another change affects (a
	// replaced worker, a catalog change, a change of a worker's state).
	Retarget chan event.GenericEvent
}

// requeueAfter is when a target is reconciled again without a change: soon while it works
// towards ready, rarely while a person must fix something (the watches and the worker's
// changes bring the fix sooner), now and then when ready.
func (r *GitTargetReconciler) requeueAfter(prob *problem) time.Duration {
	resync := r.Resync
	if resync <= 0 {
		resync = DefaultStatusResync
	}
	switch {
	case prob == nil:
		return resync
	case prob.stalled:
		return stalledResyncs * resync
	}
	return targetRequeueNotReady
}

// SetupWithManager registers the reconciler and everything that affects a target.
func (r *GitTargetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	createOrDelete := predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		DeleteFunc: func(event.DeleteEvent) bool { return true },
		UpdateFunc: func(event.UpdateEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.GitTarget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A target that comes or goes can change the owner of a branch: every target looks again.
		Watches(&v1.GitTarget{}, handler.EnqueueRequestsFromMapFunc(r.allTargets), builder.WithPredicates(createOrDelete)).
		Watches(&v1.GitProvider{}, handler.EnqueueRequestsFromMapFunc(r.allTargets), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.targetsOfSecret), builder.OnlyMetadata).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allTargets), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&v1.WatchRule{}, handler.EnqueueRequestsFromMapFunc(targetOfWatchRule), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.ClusterWatchRule{}, handler.EnqueueRequestsFromMapFunc(targetOfClusterWatchRule), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.FluxTrigger{}, handler.EnqueueRequestsFromMapFunc(r.targetsOfTrigger(kindFluxTrigger)), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.ArgoCDTrigger{}, handler.EnqueueRequestsFromMapFunc(r.targetsOfTrigger(kindArgoCDTrigger)), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Channel(r.Retarget, &handler.EnqueueRequestForObject{})).
		// Targets of different branches do not wait for each other.
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Named("gittarget").
		Complete(r)
}

func (r *GitTargetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	name := req.String()
	var t v1.GitTarget
	if err := r.Get(ctx, req.NamespacedName, &t); err != nil {
		if apierrors.IsNotFound(err) {
			if err := r.detach(ctx, name); err != nil {
				return reconcile.Result{}, err
			}
			// Gone for good: its recorded deletes have no folder to land in.
			r.Pipeline.Journal.ForgetTarget(name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !t.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.detach(ctx, name)
	}
	orig := t.DeepCopy()
	conds := conditions{list: &t.Status.Conditions, generation: t.Generation}
	prob := r.sync(ctx, &t, conds)
	if prob != nil && prob.transient {
		// Retried with backoff; the conditions keep what was last known, and the event says
		// why nothing moved.
		if r.Events != nil {
			r.Events.Eventf(&t, nil, corev1.EventTypeWarning, prob.reason, "Reconcile", "%s", prob.message)
		}
		return reconcile.Result{}, prob
	}
	if prob != nil {
		conds.set(prob.condition, false, prob.reason, prob.message)
		conds.ready(false, prob.reason, prob.message, prob.stalled)
	}
	t.Status.ObservedGeneration = t.Generation
	if err := r.Status().Patch(ctx, &t, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update status of GitTarget %s: %w", name, err)
	}
	r.recordTransitions(orig, &t)
	return reconcile.Result{RequeueAfter: r.requeueAfter(prob)}, nil
}

// sync brings the pipeline in line with the target and fills its status. A problem leaves
// the target detached (except a folder or remote problem, which the worker retries, and a
// transient one, which leaves everything as it is) and is reported; every other target goes
// on.
func (r *GitTargetReconciler) sync(ctx context.Context, t *v1.GitTarget, conds conditions) *problem {
	name := client.ObjectKeyFromObject(t).String()
	sealer, encProb := sealerFor(ctx, r.Client, r.Pipeline.DigestKeys, t)
	if encProb != nil && encProb.transient {
		return encProb
	}
	trigger, refused, err := applyTriggerOf(ctx, r.Client, t, r.Pipeline.NoCrossNamespaceTriggers)
	if err != nil {
		return &problem{condition: ConditionApplied, reason: ReasonTriggerNotFound, transient: true, message: err.Error()}
	}
	w, prob := r.attach(ctx, t, sealer, trigger)
	if prob != nil && prob.transient {
		return prob // the target keeps running as it is until the API answers again
	}
	if prob != nil {
		if err := r.detach(ctx, name); err != nil {
			return workerBusy(err.Error())
		}
		// A detached target has no folder or streams to speak of.
		meta.RemoveStatusCondition(conds.list, v1.ConditionGitPathAccepted)
		meta.RemoveStatusCondition(conds.list, v1.ConditionStreamsRunning)
		return prob
	}
	conds.set(v1.ConditionValidated, true, ReasonReady, "the GitProvider admits this target and the branch is its to write")
	if encProb != nil {
		conds.set(encProb.condition, false, encProb.reason, encProb.message)
	} else {
		conds.set(v1.ConditionEncryptionConfigured, true, ReasonReady,
			fmt.Sprintf("Secrets are written encrypted with SOPS for %d age recipient(s)", len(sealer.Recipients())))
	}
	if prob := r.runStreams(ctx, t, sealer); prob != nil {
		return prob
	}
	return r.report(ctx, t, w, conds, refused)
}

// attach validates the target and hands it to its branch's worker.
func (r *GitTargetReconciler) attach(ctx context.Context, t *v1.GitTarget, sealer *targetSealer, trigger *worker.ApplyTrigger) (*worker.Worker, *problem) {
	p, prob := admission(ctx, r.Client, t)
	if prob != nil {
		return nil, prob
	}
	if !ownership.BranchAllowed(p.Spec.AllowedBranches, t.Spec.Branch) {
		return nil, &problem{condition: v1.ConditionValidated, reason: v1.ReasonBranchNotAllowed, stalled: true,
			message: fmt.Sprintf("branch %q matches none of GitProvider %s/%s's allowedBranches %q: add it there, or use an allowed branch", t.Spec.Branch, p.Namespace, p.Name, p.Spec.AllowedBranches)}
	}
	verdict, err := verdictFor(ctx, r.Client, t)
	if err != nil {
		return nil, &problem{condition: v1.ConditionValidated, reason: ReasonOwnershipUnknown, transient: true,
			message: fmt.Sprintf("who owns branch %q cannot be decided yet: %v; retrying", t.Spec.Branch, err)}
	}
	if verdict.Conflict {
		return nil, &problem{condition: v1.ConditionValidated, reason: v1.ReasonTargetConflict, stalled: true, message: verdict.Message}
	}
	creds, prob := readCredentials(ctx, r.Client, p)
	if prob != nil {
		return nil, providerProblem(p, prob)
	}
	pem, prob := readSigningKey(ctx, r.Client, p)
	if prob != nil {
		return nil, providerProblem(p, prob)
	}
	cfg := r.workerConfig(p, creds, pem, t.Spec.Branch)
	name := client.ObjectKeyFromObject(t).String()
	if old, ok := r.Pipeline.Router.Key(name); ok && old != verdict.Key {
		// The branch's owner changed under the target.
		if err := r.detach(ctx, name); err != nil {
			return nil, workerBusy(err.Error())
		}
	}
	w, key, replaced, err := r.Pipeline.Workers.Ensure(cfg)
	if err != nil {
		return nil, &problem{condition: v1.ConditionReady, reason: ReasonWorkerFailed, message: err.Error()}
	}
	if replaced {
		// Every target of the branch takes fresh snapshots into the new worker.
		r.Pipeline.Router.Renew(key)
		r.retarget(ctx, key, name)
	}
	r.Pipeline.Router.Attach(name, key)
	// Bounded like every call into a worker: a branch stalled on its remote must not hold a
	// reconcile (and with four of them, every target of the cluster).
	setCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	if err := w.SetTarget(setCtx, targetConfig(t, sealer, trigger)); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// Busy, not failed: the target stays attached and is handed over again.
			return nil, workerBusy(fmt.Sprintf("the branch worker did not take the target within %s (a slow fetch or push); retrying", workerCallTimeout))
		}
		return nil, &problem{condition: v1.ConditionReady, reason: ReasonWorkerFailed, message: fmt.Sprintf("hand the target to its branch worker: %v", err)}
	}
	return w, nil
}

// providerProblem reports a GitProvider's problem on a target that uses it.
func providerProblem(p *v1.GitProvider, prob *problem) *problem {
	return &problem{condition: v1.ConditionValidated, reason: ReasonProviderNotReady, stalled: prob.stalled,
		message: fmt.Sprintf("GitProvider %s/%s: %s", p.Namespace, p.Name, prob.message)}
}

func (r *GitTargetReconciler) workerConfig(p *v1.GitProvider, creds gitrepo.Credentials, pem []byte, branch string) worker.Config {
	cfg := worker.Config{
		URL:             p.Spec.URL,
		Branch:          branch,
		Credentials:     creds,
		AllowedBranches: p.Spec.AllowedBranches,
		SigningKey:      pem,
		Reducer:         r.Pipeline.Reducer,
		RenderedDocs:    r.Pipeline.RenderedDocs,
		Metrics:         r.Pipeline.Metrics,
		Changes:         r.Pipeline.Changes,
		Progress:        r.Pipeline.Progress,
		Journal:         r.Pipeline.Journal,
		MaxFileBytes:    r.Pipeline.MaxFileBytes,
		Applier:         r.Pipeline.Applier,
		Log:             log.Log.WithName("worker").WithValues("provider", p.Namespace+"/"+p.Name, "branch", branch),
	}
	// Without spec.commit.committer the worker's default is the API's documented one.
	if c := p.Spec.Commit.Committer; c != nil {
		cfg.Committer = worker.Author{Name: c.Name, Email: c.Email}
	}
	if m := p.Spec.Commit.Message; m != nil {
		cfg.MessageTemplate, cfg.ResyncTemplate = m.Template, m.ResyncTemplate
	}
	cfg.CommitWindow = 5 * time.Second
	if cw := p.Spec.Push.CommitWindow; cw != nil {
		cfg.CommitWindow = cw.Duration
	}
	if r.Pipeline.Tune != nil {
		r.Pipeline.Tune(&cfg)
	}
	return cfg
}

func targetConfig(t *v1.GitTarget, sealer *targetSealer, trigger *worker.ApplyTrigger) worker.TargetConfig {
	cfg := worker.TargetConfig{
		Name:  client.ObjectKeyFromObject(t).String(),
		Path:  t.Spec.Path,
		Prune: worker.PruneMode(t.Spec.Prune.Mode),
		Apply: trigger,
		// Without a trigger the API refuses Reapply; a trigger not found yet reapplies nothing.
		Reapply:      t.Spec.OnRefusal == v1.RefusalReapply && trigger != nil,
		KeepDefaults: t.Spec.Write.Defaults == v1.DefaultsKeep,
	}
	if sealer != nil {
		cfg.SOPSRules = sealer.rules
	}
	if pl := t.Spec.Placement; pl != nil {
		cfg.Placement = layout.Placement{Default: pl.Default, ByType: pl.ByType}
	}
	return cfg
}

// detach stops the target's streams and takes it off its branch; a branch nobody writes
// any more loses its worker.
func (r *GitTargetReconciler) detach(ctx context.Context, name string) error {
	r.Pipeline.Hub.Set(name, nil)
	key, ok := r.Pipeline.Router.Key(name)
	if !ok {
		return nil
	}
	// The worker forgets the target before the router does, so that a retry after a
	// worker too busy to answer finds the key again.
	if w, ok := r.Pipeline.Workers.Lookup(key); ok {
		removeCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
		err := w.RemoveTarget(removeCtx, name)
		cancel()
		if err != nil && !errors.Is(err, worker.ErrStopped) {
			return fmt.Errorf("the branch worker did not take the removal of GitTarget %s within %s: %w; retrying", name, workerCallTimeout, err)
		}
	}
	r.Pipeline.Router.Detach(name)
	if len(r.Pipeline.Router.TargetsOf(key)) == 0 {
		r.Pipeline.Workers.Release(key)
	}
	return nil
}

// retarget asks every other target of a branch whose worker was replaced to attach again.
func (r *GitTargetReconciler) retarget(ctx context.Context, key ownership.BranchKey, except string) {
	for _, name := range r.Pipeline.Router.TargetsOf(key) {
		if name == except {
			continue
		}
		send(ctx, r.Retarget, targetRef(name))
	}
}

// report fills the status from the worker and the streams.
func (r *GitTargetReconciler) report(ctx context.Context, t *v1.GitTarget, w *worker.Worker, conds conditions, refused *triggerRefusal) *problem {
	name := client.ObjectKeyFromObject(t).String()
	// The worker answers between fetches and pushes; a slow remote must not hold up the
	// reconciles of every other target.
	statusCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	st, err := w.Status(statusCtx)
	if err != nil {
		return &problem{condition: v1.ConditionReady, reason: ReasonWorkerBusy,
			message: fmt.Sprintf("the branch worker did not answer within %s (a slow fetch or push); asking again", workerCallTimeout)}
	}
	applies, named := st.Applies[name]
	reportApplied(conds, t, refused, applies, named)
	if applies.Resnapshot > 0 && r.Pipeline.Router.RenewTarget(name, applies.Resnapshot) {
		// A snapshot taken while Git was ahead was discarded; the apply has landed: the
		// next reconcile subscribes afresh and the streams send a new one.
		send(ctx, r.Retarget, targetRef(name))
	}
	t.Status.RetainedDocuments = int64(st.Retained[name])
	if st.RemoteTip != "" {
		t.Status.LastCommit = st.RemoteTip
	}
	if !st.LastPush.IsZero() {
		t.Status.LastPushTime = &metav1.Time{Time: st.LastPush}
	}
	if msg, refused := st.Refused[name]; refused {
		return &problem{condition: v1.ConditionGitPathAccepted, reason: v1.ReasonUnsupportedContent, stalled: true,
			message: msg + "; nothing is written into the folder until it is fixed"}
	}
	if msg, refused := st.Boundary[name]; refused {
		if _, held := st.Held[name]; held {
			return &problem{condition: v1.ConditionGitPathAccepted, reason: v1.ReasonWriteBoundaryRefused,
				message: msg + "; the batch could not be written without it, so it and the target's later changes are held and tried again when the folder changes"}
		}
		return &problem{condition: v1.ConditionGitPathAccepted, reason: v1.ReasonWriteBoundaryRefused,
			message: msg + "; the refused change is kept and tried again when the folder changes, later changes are still written"}
	}
	conds.set(v1.ConditionGitPathAccepted, true, ReasonReady, fmt.Sprintf("folder %q of branch %q is the operator's to write", t.Spec.Path, t.Spec.Branch))
	if prob := reportFidelity(conds, st.Fidelity[name]); prob != nil {
		return prob
	}
	if prob := r.streamsProblem(name); prob != nil {
		return prob
	}
	conds.set(v1.ConditionStreamsRunning, true, ReasonReady, streamsMessage(len(r.Pipeline.Hub.Status(name))))
	switch {
	case st.Held[name] != "":
		return &problem{condition: v1.ConditionReady, reason: ReasonWritesHeld,
			message: fmt.Sprintf("%s; the target's changes are kept and tried again after %s, nothing is dropped", st.Held[name], st.RecheckAt.UTC().Format(time.RFC3339))}
	case st.Failures > 0:
		return &problem{condition: v1.ConditionReady, reason: ReasonPushFailing,
			message: fmt.Sprintf("%s; retrying at %s, nothing is dropped", st.LastError, st.RetryAt.UTC().Format(time.RFC3339))}
	case !st.Ready:
		return &problem{condition: v1.ConditionReady, reason: ReasonWaitingForBranch, message: "the branch has not been fetched yet"}
	}
	conds.ready(true, ReasonReady, fmt.Sprintf("mirroring into %s on branch %s", t.Spec.Path, t.Spec.Branch), false)
	return nil
}

// reportFidelity sets RenderMatchesLive (docs/kustomize.md#render-fidelity) and returns the
// problem while it is False: the target's writes are held back then.
func reportFidelity(conds conditions, f worker.Fidelity) *problem {
	switch f.State {
	case worker.FidelityFalse:
		return &problem{condition: v1.ConditionRenderMatchesLive, reason: v1.ReasonRenderDoesNotMatchLive,
			message: f.Divergence + ": something outside the folder (a Flux postBuild substitution?) sets it; the target's changes are held, not dropped, until every value measures clean: put the live value in Git, or stop the substitution; it is measured again on every recheck and after every fetch that changes the folder"}
	case worker.FidelityTrue:
		conds.set(v1.ConditionRenderMatchesLive, true, ReasonRenderMatchesLive, "every rendered ${...} value equals the live value")
	default:
		conds.unknown(v1.ConditionRenderMatchesLive, ReasonRechecking, "waiting for the first snapshot of the target's objects to measure the render against")
	}
	return nil
}

// streamsProblem reports streams that have not delivered a snapshot yet, or nil with the
// StreamsRunning condition to set.
func (r *GitTargetReconciler) streamsProblem(name string) *problem {
	for _, s := range r.Pipeline.Hub.Status(name) {
		if !s.Synced {
			msg := fmt.Sprintf("stream %s has no complete snapshot yet", s.Key)
			if s.LastError != "" {
				msg += ": " + s.LastError
			}
			return &problem{condition: v1.ConditionStreamsRunning, reason: ReasonStreamsStarting, message: msg}
		}
	}
	return nil
}
