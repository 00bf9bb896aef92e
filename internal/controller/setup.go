package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// SetupOptions configure the pipeline and the reconcilers that drive it.
type SetupOptions struct {
	pipeline.Options
	// StatusResync is how often a ready GitTarget's status is refreshed without a change
	// (DefaultStatusResync when 0).
	StatusResync time.Duration
	// OnPipeline, when set, is given the pipeline once it is built (tests read its registry
	// of workers).
	OnPipeline func(*pipeline.Pipeline)
}

// Setup builds the pipeline and registers every reconciler with mgr. The pipeline runs
// while ctx lasts.
func Setup(ctx context.Context, mgr ctrl.Manager, opts SetupOptions) error {
	p, err := pipeline.New(ctx, mgr.GetConfig(), mgr.GetClient(), mgr.GetAPIReader(), opts.Options, ctrl.Log.WithName("pipeline"))
	if err != nil {
		return err
	}
	if opts.OnPipeline != nil {
		opts.OnPipeline(p)
	}
	retarget := make(chan event.GenericEvent, 256)
	rulesRecheck := make(chan event.GenericEvent, 256)
	clusterRulesRecheck := make(chan event.GenericEvent, 256)
	c := mgr.GetClient()
	steps := []func() error{
		func() error { return mgr.Add(p.Catalog) },
		// While leading, the journal of deletes is loaded and kept; leadership is released
		// only after every branch worker made its last push and the journal its last write:
		// the manager stops this runnable, and waits for it, before it gives up the Lease.
		func() error {
			return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
				p.JournalStore.Run(ctx)
				p.Workers.StopAll()
				last, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := p.JournalStore.Save(last); err != nil {
					return fmt.Errorf("last write of the journal of deletes: %w", err)
				}
				return nil
			}))
		},
		func() error { return watchCRDs(mgr, p.Catalog) },
		func() error {
			return mgr.Add(&catalogNotifier{client: c, catalog: p.Catalog, targets: retarget, rules: rulesRecheck, clusterRules: clusterRulesRecheck})
		},
		func() error { return mgr.Add(&workerChanges{changes: p.Changes, targets: retarget}) },
		func() error { return mgr.Add(&progressReporter{client: c, board: p.Progress}) },
		func() error {
			return (&GitProviderReconciler{Client: c, ProbeDir: filepath.Join(opts.WorkDir, "probes")}).SetupWithManager(mgr)
		},
		func() error {
			return (&GitTargetReconciler{Client: c, Pipeline: p, Retarget: retarget, Events: mgr.GetEventRecorder("gitops-reverser"), Resync: opts.StatusResync}).SetupWithManager(mgr)
		},
		func() error { return mgr.AddReadyzCheck("discovery", p.DiscoveryRan) },
		func() error {
			return (&WatchRuleReconciler{Client: c, Catalog: p.Catalog, Access: p.Access, Sensitive: p.Sensitive, Recheck: rulesRecheck}).SetupWithManager(mgr)
		},
		func() error {
			return (&ClusterWatchRuleReconciler{Client: c, Catalog: p.Catalog, Sensitive: p.Sensitive, Recheck: clusterRulesRecheck}).SetupWithManager(mgr)
		},
		func() error { return (&FluxTriggerReconciler{Client: c, Pipeline: p}).SetupWithManager(mgr) },
		func() error { return (&ArgoCDTriggerReconciler{Client: c, Pipeline: p}).SetupWithManager(mgr) },
		func() error {
			return (&CommitRequestReconciler{Client: c, Pipeline: p, Attributed: opts.Attribution != nil, Context: ctx}).SetupWithManager(mgr)
		},
	}
	if err := os.MkdirAll(filepath.Join(opts.WorkDir, "probes"), 0o700); err != nil {
		return fmt.Errorf("work dir %s: %w", opts.WorkDir, err)
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// watchCRDs refreshes the catalog whenever a CustomResourceDefinition changes, so that a
// type installed later is watched without a restart (docs/watch-rules.md#the-catalog). Only
// metadata is cached.
func watchCRDs(mgr ctrl.Manager, cat *watch.Catalog) error {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(crdGVK)
	return ctrl.NewControllerManagedBy(mgr).
		For(crd, builder.OnlyMetadata).
		Named("crd-catalog").
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			cat.Refresh()
			return reconcile.Result{}, nil
		}))
}

// catalogNotifier asks every GitTarget and rule to look again when the catalog changes.
type catalogNotifier struct {
	client                       client.Client
	catalog                      *watch.Catalog
	targets, rules, clusterRules chan event.GenericEvent
}

var _ manager.Runnable = (*catalogNotifier)(nil)

func (n *catalogNotifier) Start(ctx context.Context) error {
	for {
		changed := n.catalog.Changes()
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		n.notify(ctx)
	}
}

func (n *catalogNotifier) notify(ctx context.Context) {
	var targets v1.GitTargetList
	var rules v1.WatchRuleList
	var clusterRules v1.ClusterWatchRuleList
	if n.client.List(ctx, &targets) == nil {
		for i := range targets.Items {
			send(ctx, n.targets, &targets.Items[i])
		}
	}
	if n.client.List(ctx, &rules) == nil {
		for i := range rules.Items {
			send(ctx, n.rules, &rules.Items[i])
		}
	}
	if n.client.List(ctx, &clusterRules) == nil {
		for i := range clusterRules.Items {
			send(ctx, n.clusterRules, &clusterRules.Items[i])
		}
	}
}

// workerChanges asks the GitTargets whose worker state changed to report it
// (docs/controllers.md#status-follows-the-worker).
type workerChanges struct {
	changes *worker.Changes
	targets chan event.GenericEvent
}

var _ manager.Runnable = (*workerChanges)(nil)

func (w *workerChanges) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.changes.Ready():
		}
		for _, name := range w.changes.Take() {
			send(ctx, w.targets, targetRef(name))
		}
	}
}

func send(ctx context.Context, ch chan event.GenericEvent, obj client.Object) {
	select {
	case ch <- event.GenericEvent{Object: obj}:
	case <-ctx.Done():
	}
}

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
