package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

const (
	commitRequestRetry      = 5 * time.Second
	commitRequestSaveBudget = 5 * time.Minute
)

// CommitRequestReconciler closes the open window of the named GitTarget with the request's
// message and reports the commit as it exists on the remote after any replay
// (docs/controllers.md#commitrequest). A request is answered once; its spec is immutable.
// The wait for the push does not hold a reconcile: the worker's answer is awaited by a
// goroutine of the request (saves), which asks for a reconcile when it comes.
type CommitRequestReconciler struct {
	client.Client
	Pipeline *pipeline.Pipeline
	// Attributed is set when attribution is on: commits carry their Kubernetes authors.
	Attributed bool

	// Context bounds the goroutines that wait for the workers' answers: the pipeline's,
	// which ends when the manager stops.
	Context context.Context

	saves    *saves
	answered chan event.GenericEvent
}

func (r *CommitRequestReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.saves = &saves{waiting: map[types.NamespacedName]*save{}}
	r.answered = make(chan event.GenericEvent, 64)
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.CommitRequest{}).
		WatchesRawSource(source.Channel(r.answered, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Named("commitrequest").
		Complete(r)
}

func (r *CommitRequestReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cr v1.CommitRequest
	if err := r.Get(ctx, req.NamespacedName, &cr); err != nil {
		if apierrors.IsNotFound(err) {
			r.saves.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if meta.IsStatusConditionTrue(cr.Status.Conditions, v1.ConditionPushed) {
		return reconcile.Result{}, nil // answered
	}
	orig := cr.DeepCopy()
	conds := conditions{list: &cr.Status.Conditions, generation: cr.Generation}
	prob, waiting := r.save(ctx, &cr, conds)
	if waiting {
		// The answer asks for the next reconcile; the requeue is a safety net.
		return reconcile.Result{RequeueAfter: commitRequestSaveBudget + time.Minute}, nil
	}
	if prob != nil {
		conds.set(v1.ConditionPushed, false, prob.reason, prob.message)
		conds.ready(false, prob.reason, prob.message, false)
	}
	cr.Status.ObservedGeneration = cr.Generation
	if err := r.Status().Patch(ctx, &cr, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update status of CommitRequest %s: %w", req.NamespacedName, err)
	}
	// The answer is reported: a later reconcile (a retry) hands the request over again.
	r.saves.forget(req.NamespacedName)
	if prob != nil {
		return reconcile.Result{RequeueAfter: commitRequestRetry}, nil
	}
	return reconcile.Result{}, nil
}

// save asks the target's worker to close its window, and reports the answer once it came.
// waiting is true while the answer is awaited.
func (r *CommitRequestReconciler) save(ctx context.Context, cr *v1.CommitRequest, conds conditions) (_ *problem, waiting bool) {
	name := client.ObjectKeyFromObject(cr)
	target := client.ObjectKey{Namespace: cr.Namespace, Name: cr.Spec.TargetRef.Name}
	var t v1.GitTarget
	if err := r.Get(ctx, target, &t); err != nil {
		return &problem{reason: ReasonTargetNotFound, message: fmt.Sprintf("GitTarget %s named by spec.targetRef cannot be read: %s", target, reasonOf(err))}, false
	}
	key, ok := r.Pipeline.Router.Key(target.String())
	var w *worker.Worker
	if ok {
		w, ok = r.Pipeline.Workers.Lookup(key)
	}
	if !ok {
		return &problem{reason: ReasonTargetNotReady, message: fmt.Sprintf("GitTarget %s is not writing a branch yet (see its conditions); retrying", target)}, false
	}
	res, started := r.saves.answer(name, cr.UID)
	switch {
	case !started:
		if err := r.startSave(ctx, cr, w); err != nil {
			return &problem{reason: ReasonPushFailed, message: fmt.Sprintf("hand the request to the branch worker: %v; retrying", err)}, false
		}
		return nil, true
	case res == nil:
		return nil, true
	}
	return r.report(cr, &t, *res, conds), false
}

// startSave hands the request to the worker (bounded, like every call into a worker) and
// waits for the answer in a goroutine of its own.
func (r *CommitRequestReconciler) startSave(ctx context.Context, cr *v1.CommitRequest, w *worker.Worker) error {
	sendCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	reply, err := w.Save(sendCtx, cr.Namespace+"/"+cr.Spec.TargetRef.Name, cr.Spec.Message)
	if err != nil {
		return err
	}
	s := r.saves.start(client.ObjectKeyFromObject(cr), cr.UID)
	obj := &v1.CommitRequest{}
	obj.Namespace, obj.Name = cr.Namespace, cr.Name
	ctx = r.Context
	go func() {
		timeout := time.NewTimer(commitRequestSaveBudget)
		defer timeout.Stop()
		var res worker.SaveResult
		select {
		case res = <-reply:
		case <-w.Done():
			res = worker.SaveResult{Err: worker.ErrStopped}
		case <-timeout.C:
			res = worker.SaveResult{Err: fmt.Errorf("the commit is not on the remote after %s", commitRequestSaveBudget)}
		case <-ctx.Done():
			return
		}
		r.saves.answered(s, res)
		send(ctx, r.answered, obj)
	}()
	return nil
}

// report turns the worker's answer into the request's status.
func (r *CommitRequestReconciler) report(cr *v1.CommitRequest, t *v1.GitTarget, res worker.SaveResult, conds conditions) *problem {
	cr.Status.Branch = t.Spec.Branch
	switch {
	case res.Held != "":
		return &problem{reason: ReasonWritesHeld, message: fmt.Sprintf("the target's changes are held, not dropped: %s; asking again", res.Held)}
	case res.Err != nil:
		return &problem{reason: ReasonPushFailed, message: fmt.Sprintf("push: %v; retrying", res.Err)}
	case res.NothingCommitted:
		cr.Status.SHA = res.SHA
		conds.set(v1.ConditionAuthorAttributed, false, ReasonNothingPending, "the request made no commit, so there is no author to attribute")
		msg := "no change of the target was waiting to be committed; sha is the branch tip"
		conds.set(v1.ConditionPushed, true, ReasonNothingPending, msg)
		conds.ready(true, ReasonNothingPending, msg, false)
		return nil
	}
	cr.Status.SHA = res.SHA
	r.reportAuthor(conds, res)
	msg := fmt.Sprintf("commit %s is on branch %s", shortSHA(res.SHA), t.Spec.Branch)
	conds.set(v1.ConditionPushed, true, ReasonPushed, msg)
	conds.ready(true, ReasonPushed, msg, false)
	return nil
}

// reportAuthor sets AuthorAttributed for the commit holding the request's changes: true only
// when its author is a resolved Kubernetes user.
func (r *CommitRequestReconciler) reportAuthor(conds conditions, res worker.SaveResult) {
	switch {
	case !r.Attributed:
		conds.set(v1.ConditionAuthorAttributed, false, ReasonAttributionOff, "attribution is not configured (--audit-bind-address): the commit's author is the committer")
	case res.ByCommitter:
		conds.set(v1.ConditionAuthorAttributed, false, ReasonAuthorUnresolved, "the commit holding these changes is authored by the committer (a resync's commit): no Kubernetes user is named")
	case res.Author.Email == attribution.UnresolvedEmail || res.Author.Name == "":
		conds.set(v1.ConditionAuthorAttributed, false, ReasonAuthorUnresolved, "no audit event named the author of these changes in time: the commit is authored "+attribution.UnresolvedName)
	default:
		conds.set(v1.ConditionAuthorAttributed, true, ReasonAttributed, "the commit is authored by the Kubernetes user of its changes, with their audit IDs as trailers")
	}
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
