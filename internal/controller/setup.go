package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/route"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// SetupOptions configure the pipeline the reconcilers wire.
type SetupOptions struct {
	// WorkDir holds the branch workers' local copies.
	WorkDir string
	// Tune, when set, adjusts every branch worker's configuration.
	Tune func(*worker.Config)
	// SensitiveTypes are written only encrypted, like Secrets (--sensitive-types).
	SensitiveTypes watch.SensitiveTypes
	// StateNamespace holds the Secrets the operator itself owns (the digest key).
	StateNamespace string
	// Attribution, when set, holds the audit facts that name the author of each change;
	// AttributionGrace is how long a change waits for its fact.
	Attribution      *attribution.Index
	AttributionGrace time.Duration
	// CatalogOptions tune discovery refreshes.
	CatalogOptions []watch.CatalogOption
	// StatusResync is how often a ready GitTarget's status is refreshed without a change
	// (DefaultStatusResync when 0).
	StatusResync time.Duration
}

// Setup builds the pipeline and registers every reconciler with mgr. The pipeline runs
// while ctx lasts.
func Setup(ctx context.Context, mgr ctrl.Manager, opts SetupOptions) error {
	cfg := mgr.GetConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	if err := os.MkdirAll(opts.WorkDir, 0o700); err != nil {
		return fmt.Errorf("work dir %s: %w", opts.WorkDir, err)
	}
	log := ctrl.Log.WithName("pipeline")
	m, err := metrics.New(ctrlmetrics.Registry)
	if err != nil {
		return err
	}
	registry := worker.NewRegistry(ctx, filepath.Join(opts.WorkDir, "branches"))
	p := &Pipeline{
		Workers:   registry,
		Router:    route.NewRouter(registry, attributor(opts, m), opts.SensitiveTypes),
		Hub:       watch.NewHub(ctx, dyn, sanitize.Object, opts.SensitiveTypes, m, log.WithName("streams")),
		Sensitive: opts.SensitiveTypes,
		Catalog:   watch.NewCatalog(disco, log.WithName("catalog"), opts.CatalogOptions...),
		Reducer:   pipelineReducer{defaults: sanitize.NewDefaulter(dyn)},
		Tune:      opts.Tune,
		Metrics:   m,
		Retarget:  make(chan event.GenericEvent, 256),
		Changes:   worker.NewChanges(),
	}
	p.DigestKeys = &digestKeys{client: mgr.GetClient(), namespace: opts.StateNamespace}
	rulesRecheck := make(chan event.GenericEvent, 256)
	clusterRulesRecheck := make(chan event.GenericEvent, 256)
	c := mgr.GetClient()
	steps := []func() error{
		func() error { return mgr.Add(p.Catalog) },
		// Leadership is released only after every branch worker made its last push: the
		// manager stops this runnable, and waits for it, before it gives up the Lease.
		func() error {
			return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
				<-ctx.Done()
				registry.StopAll()
				return nil
			}))
		},
		func() error { return watchCRDs(mgr, p.Catalog) },
		func() error {
			return mgr.Add(&catalogNotifier{client: c, catalog: p.Catalog, targets: p.Retarget, rules: rulesRecheck, clusterRules: clusterRulesRecheck})
		},
		func() error { return mgr.Add(&workerChanges{changes: p.Changes, targets: p.Retarget}) },
		func() error {
			return (&GitProviderReconciler{Client: c, ProbeDir: filepath.Join(opts.WorkDir, "probes")}).SetupWithManager(mgr)
		},
		func() error {
			return (&GitTargetReconciler{Client: c, Pipeline: p, Events: mgr.GetEventRecorder("gitops-reverser"), Resync: opts.StatusResync}).SetupWithManager(mgr)
		},
		func() error { return mgr.AddReadyzCheck("discovery", p.discoveryRan) },
		func() error {
			return (&WatchRuleReconciler{Client: c, Catalog: p.Catalog, Sensitive: opts.SensitiveTypes, Recheck: rulesRecheck}).SetupWithManager(mgr)
		},
		func() error {
			return (&ClusterWatchRuleReconciler{Client: c, Catalog: p.Catalog, Sensitive: opts.SensitiveTypes, Recheck: clusterRulesRecheck}).SetupWithManager(mgr)
		},
		func() error {
			return (&CommitRequestReconciler{Client: c, Pipeline: p, Attributed: opts.Attribution != nil}).SetupWithManager(mgr)
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
			obj := &v1.GitTarget{}
			obj.Namespace, obj.Name = splitName(name)
			send(ctx, w.targets, obj)
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

// attributor is the attribution join when attribution is on, else nil.
func attributor(opts SetupOptions, m *metrics.Metrics) route.Attributor {
	if opts.Attribution == nil {
		return nil
	}
	grace := opts.AttributionGrace
	if grace <= 0 {
		grace = attribution.DefaultGrace
	}
	return attributionJoin{index: opts.Attribution, grace: grace, metrics: m}
}
