package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/kubescheme"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
)

// RestConfig loads the configuration of the API server to run against: the --kubeconfig
// file when given, otherwise $KUBECONFIG or the in-cluster service account.
func RestConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
		// As controller-runtime does for $KUBECONFIG and in-cluster configurations: no
		// client-side throttling (client-go's default is 5 requests/s), the API server's
		// priority and fairness limits instead. Throttled, a start with thousands of
		// objects waits on its own client.
		if cfg.QPS == 0 {
			cfg.QPS = -1
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("load cluster configuration: %w", err)
	}
	return cfg, nil
}

// Run starts the manager and blocks until ctx is cancelled or the manager fails.
func Run(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	tuneCollector()
	cfg, err := RestConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	scheme, err := kubescheme.New()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, scheme))
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}
	index, err := startAttribution(mgr, opts)
	if err != nil {
		return err
	}
	sensitive, err := ParseSensitiveTypes(opts.SensitiveTypes)
	if err != nil {
		return err
	}
	workDir := opts.WorkDir
	if workDir == "" {
		workDir = filepath.Join(os.TempDir(), "gitops-reverser")
	}
	wiring := pipeline.Options{WorkDir: workDir, Tune: opts.Tune, StateNamespace: stateNamespace(opts), MaxFileBytes: opts.MaxFileBytes,
		Attribution: index, AttributionGrace: opts.AttributionGrace, SensitiveTypes: sensitive,
		DefaultServiceAccount: opts.DefaultServiceAccount, NoCrossNamespaceTriggers: opts.NoCrossNamespaceTriggers}
	if err := controller.Setup(ctx, mgr, controller.SetupOptions{Options: wiring, StatusResync: opts.StatusResync, OnPipeline: opts.OnPipeline}); err != nil {
		return fmt.Errorf("set up controllers: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

// managerOptions configures the manager. Secrets are never cached: the operator reads the
// few it uses (credentials, recipients, its digest key) from the API server when it needs
// them, and watches Secrets' metadata only (docs/security.md#secrets-are-not-cached), so
// that no Secret's data of the cluster sits in its memory.
func managerOptions(opts Options, scheme *runtime.Scheme) ctrl.Options {
	return ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        opts.LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNS,
		// Release the lease on shutdown so a successor takes over at once.
		LeaderElectionReleaseOnCancel: true,
		// Run may be called again in one process (the sandbox, tests that restart the
		// operator); controller names are unique within each run.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Cache:      cache.Options{DefaultTransform: stripCached},
	}
}

// stripCached drops from every cached object its managed fields (bookkeeping nobody here
// reads), and from a Secret's cached metadata its annotations: kubectl apply keeps the whole
// Secret, data included, in kubectl.kubernetes.io/last-applied-configuration.
func stripCached(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok && m.Kind == "Secret" && m.APIVersion == "v1" {
			m.SetAnnotations(nil)
		}
	}
	return obj, nil
}

func stateNamespace(opts Options) string {
	if opts.StateNamespace != "" {
		return opts.StateNamespace
	}
	return defaultStateNamespace()
}
