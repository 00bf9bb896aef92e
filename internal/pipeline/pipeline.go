// Package pipeline wires the stages of the write path — the catalog and the hub of watch
// streams, the router and its attribution join, the registry of branch workers, the reducer
// and the digest key of sealed Secrets — into one Pipeline that the reconcilers of
// internal/controller drive (docs/ARCHITECTURE.md). It holds no reconciler.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/route"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// Pipeline is what the reconcilers wire: one worker per repository branch, one stream per
// (resource type, scope), the routes between them, and the catalog rules resolve against.
type Pipeline struct {
	Workers *worker.Registry
	Router  *route.Router
	Hub     *watch.Hub
	Catalog *watch.Catalog
	// Reducer takes server defaults out of live documents
	// (docs/sanitize.md#server-defaults-are-not-edits); nil writes them as they are.
	Reducer worker.Reducer
	// RenderedDocs: the Hub's documents are sanitize.Render's, sealed or not, so a worker
	// may write a new object's document as it is (worker.Config.RenderedDocs).
	RenderedDocs bool
	// Tune, when set, adjusts every branch worker's configuration (timings in tests).
	Tune func(*worker.Config)
	// MaxFileBytes bounds every file a branch worker reads.
	MaxFileBytes int64
	// Sensitive names the types written only encrypted (Secrets and --sensitive-types).
	Sensitive watch.SensitiveTypes
	// Metrics records every stage; shared by workers and streams.
	Metrics *metrics.Metrics
	// DigestKeys holds the key of sealed Secrets' digests.
	DigestKeys *DigestKeys
	// Changes gathers the targets whose worker state changed; the controller turns them
	// into reconciles.
	Changes *worker.Changes
	// Progress is how far each target's first mirror has come, written by the workers and
	// read for the GitTargets' status without waiting for a busy worker.
	Progress *worker.ProgressBoard
	// Journal keeps the deletes the workers received until they are in Git; JournalStore
	// persists it (docs/branch-worker.md#restart).
	Journal      *worker.Journal
	JournalStore *JournalStore
	// Access decides which resources a WatchRule's service account may have mirrored
	// (docs/tenancy.md).
	Access *watch.Access
	// Applier asks GitOps appliers (Flux) to apply the branches of triggered targets
	// (docs/two-way.md).
	Applier worker.Applier
	// NoCrossNamespaceTriggers refuses a trigger naming a Kustomization or an Application of another
	// namespace (--no-cross-namespace-triggers).
	NoCrossNamespaceTriggers bool
}

// Options configure a Pipeline.
type Options struct {
	// WorkDir holds the branch workers' local copies.
	WorkDir string
	// Tune, when set, adjusts every branch worker's configuration.
	Tune func(*worker.Config)
	// SensitiveTypes are written only encrypted, like Secrets (--sensitive-types).
	SensitiveTypes watch.SensitiveTypes
	// StateNamespace holds the Secrets the operator itself owns (the digest
	// key, the journal of deletes).
	StateNamespace string
	// Attribution, when set, holds the audit facts that name the author of each change;
	// AttributionGrace is how long a change waits for its fact.
	Attribution      *attribution.Index
	AttributionGrace time.Duration
	// CatalogOptions tune discovery refreshes.
	CatalogOptions []watch.CatalogOption
	// MaxFileBytes bounds every file a branch worker reads (0: bounds.DefaultMaxFileBytes).
	MaxFileBytes int64
	// DefaultServiceAccount, when set, gives every WatchRule without
	// spec.serviceAccountName the rights of that service account of its namespace.
	DefaultServiceAccount string
	// NoCrossNamespaceTriggers refuses a trigger naming a Kustomization or an Application of another
	// namespace.
	NoCrossNamespaceTriggers bool
}

// New builds the pipeline on the API server of cfg; c reads and writes the operator's own
// Secrets, reader reads them past any cache. Its workers and streams run
// while ctx lasts.
func New(ctx context.Context, cfg *rest.Config, c client.Client, reader client.Reader, opts Options, log logr.Logger) (*Pipeline, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	if err := os.MkdirAll(opts.WorkDir, 0o700); err != nil {
		return nil, fmt.Errorf("work dir %s: %w", opts.WorkDir, err)
	}
	m, err := metrics.New(ctrlmetrics.Registry)
	if err != nil {
		return nil, err
	}
	registry := worker.NewRegistry(ctx, filepath.Join(opts.WorkDir, "branches"))
	journal := worker.NewJournal()
	return &Pipeline{
		Workers:      registry,
		Router:       route.NewRouter(registry, attributor(opts, m), opts.SensitiveTypes),
		Hub:          watch.NewHub(ctx, dyn, sanitize.Render, opts.SensitiveTypes, m, log.WithName("streams")),
		Sensitive:    opts.SensitiveTypes,
		Catalog:      watch.NewCatalog(disco, log.WithName("catalog"), opts.CatalogOptions...),
		Reducer:      pipelineReducer{defaults: sanitize.NewDefaulter(dyn)},
		RenderedDocs: true, // the Hub above sanitizes with sanitize.Render
		Tune:         opts.Tune,
		MaxFileBytes: opts.MaxFileBytes,
		Metrics:      m,
		DigestKeys:   &DigestKeys{client: c, namespace: opts.StateNamespace},
		Changes:      worker.NewChanges(),
		Progress:     worker.NewProgressBoard(),
		Journal:      journal,
		JournalStore: &JournalStore{Journal: journal, Reader: reader, Writer: c, Namespace: opts.StateNamespace,
			Log: log.WithName("journal")},
		Access:                   watch.NewAccess(c, opts.DefaultServiceAccount),
		Applier:                  appliers{flux: &applier.Flux{Client: c}, argocd: &applier.ArgoCD{Client: c}},
		NoCrossNamespaceTriggers: opts.NoCrossNamespaceTriggers,
	}, nil
}

// DiscoveryRan is the readiness check: the operator is ready once discovery answered (the
// catalog runs on every replica; a follower is ready to take over).
func (p *Pipeline) DiscoveryRan(*http.Request) error {
	select {
	case <-p.Catalog.Synced():
		return nil
	default:
		return errors.New("discovery has not answered yet")
	}
}

// attributor is the attribution join when attribution is on, else nil.
func attributor(opts Options, m *metrics.Metrics) route.Attributor {
	if opts.Attribution == nil {
		return nil
	}
	grace := opts.AttributionGrace
	if grace <= 0 {
		grace = attribution.DefaultGrace
	}
	return attributionJoin{index: opts.Attribution, grace: grace, metrics: m}
}
