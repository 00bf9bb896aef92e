// Package operator wires the controller-runtime manager of `gitops-reverser run`.
package operator

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gitops-reverser/gitops-reverser/internal/bounds"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// Options are the flags of `gitops-reverser run` (docs/operations.md#the-flags-of-run).
type Options struct {
	Kubeconfig             string
	MetricsBindAddress     string
	HealthProbeBindAddress string
	LeaderElect            bool
	LeaderElectionID       string
	LeaderElectionNS       string
	// WorkDir holds the branch workers' local copies of the repositories.
	WorkDir string
	// StateNamespace holds the Secrets the operator owns (the digest key of sealed Secrets).
	// OnPipeline, when set, is given the pipeline once it is built (not a flag: tests read
	// its registry of workers).
	OnPipeline func(*pipeline.Pipeline) `json:"-"`
	// MaxFileBytes bounds every file read from a repository (docs/security.md#bounded-reading).
	MaxFileBytes   int64
	StateNamespace string
	// Tune, when set, adjusts every branch worker's configuration (embedding and tests;
	// there is no flag for it).
	Tune func(*worker.Config)

	// Audit webhook for attribution (docs/attribution.md#in-the-operator).
	AuditBindAddress  string
	AuditCertFile     string
	AuditKeyFile      string
	AuditClientCAFile string
	AuditInsecure     bool
	// AuditAllowedNames are the client certificate names the audit webhook accepts
	// (comma-separated); empty accepts any the client CA signed.
	AuditAllowedNames string
	// AttributionGrace is how long a change waits for its audit event.
	AttributionGrace time.Duration
	// SensitiveTypes are "resource.group" names (core: "resource") written only
	// encrypted, like Secrets.
	SensitiveTypes string
	// StatusResync is how often a ready GitTarget's status is refreshed without a change.
	StatusResync time.Duration
	// DefaultServiceAccount, when set, is the service account of its own namespace whose
	// rights a WatchRule without spec.serviceAccountName has (docs/tenancy.md).
	DefaultServiceAccount string
	// NoCrossNamespaceTriggers refuses a trigger naming a Kustomization or an Application of another
	// namespace (docs/two-way.md#tenancy).
	NoCrossNamespaceTriggers bool
}

// BindFlags registers the options on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig; empty means in-cluster or $KUBECONFIG.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint; 0 turns it off, 127.0.0.1:0 picks a free port.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; 0 turns them off, 127.0.0.1:0 picks a free port.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "Elect a leader so that only one replica writes.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "gitops-reverser.gitops-reverser.io", "Name of the leader election Lease.")
	fs.StringVar(&o.LeaderElectionNS, "leader-election-namespace", "", "Namespace of the leader election Lease; empty means the operator's own namespace.")
	fs.StringVar(&o.WorkDir, "work-dir", filepath.Join(os.TempDir(), "gitops-reverser"), "Directory for the local copies of the repositories (an emptyDir in a cluster).")
	fs.StringVar(&o.StateNamespace, "state-namespace", defaultStateNamespace(), "Namespace of the Secrets the operator owns (the digest key of encrypted Secrets); defaults to $POD_NAMESPACE, else default.")
	fs.StringVar(&o.AuditBindAddress, "audit-bind-address", "", "Address of the audit webhook (/audit-webhook) for author attribution; empty turns attribution off.")
	fs.StringVar(&o.AuditCertFile, "audit-cert-file", "", "TLS certificate of the audit webhook.")
	fs.StringVar(&o.AuditKeyFile, "audit-key-file", "", "TLS key of the audit webhook.")
	fs.StringVar(&o.AuditClientCAFile, "audit-client-ca-file", "", "CA that signs the kube-apiserver's audit client certificates.")
	fs.BoolVar(&o.AuditInsecure, "audit-insecure", false, "Serve the audit webhook over plain HTTP without client authentication; only on a loopback --audit-bind-address.")
	fs.StringVar(&o.AuditAllowedNames, "audit-allowed-names", "", "Comma-separated client certificate common names the audit webhook accepts, e.g. kube-apiserver; empty accepts any certificate the client CA signed.")
	fs.StringVar(&o.SensitiveTypes, "sensitive-types", "", "Comma-separated resource types written only encrypted, like Secrets (which always are), as resource.group, e.g. \"certificates.cert-manager.io,configmaps\".")
	fs.DurationVar(&o.StatusResync, "status-resync", controller.DefaultStatusResync, "How often a ready GitTarget's status (last commit, retained documents) is refreshed without a change; changes of its conditions are reported as they happen.")
	fs.Int64Var(&o.MaxFileBytes, "max-file-bytes", bounds.DefaultMaxFileBytes, "Size of the largest file read from a repository; a folder holding a larger one (or a YAML file whose aliases expand beyond a million values) is refused by name and nothing else stops.")
	fs.StringVar(&o.DefaultServiceAccount, "default-service-account", "", "Lockdown for tenants: a WatchRule without spec.serviceAccountName mirrors only what this service account of the rule's namespace may list and watch (docs/tenancy.md); empty gives such rules the operator's own rights.")
	fs.BoolVar(&o.NoCrossNamespaceTriggers, "no-cross-namespace-triggers", false, "Refuse a FluxTrigger or ArgoCDTrigger naming a Kustomization or Application of another namespace (as Flux's --no-cross-namespace-refs): a tenant then asks only its own namespace's Kustomizations and Applications to apply.")
	fs.DurationVar(&o.AttributionGrace, "attribution-grace", 3*time.Second, "How long a change waits for the audit event that names its author before it is committed as unknown (attribution unresolved).")
}

// Validate reports options that cannot work together.
func (o *Options) Validate() error {
	tlsFlags := o.AuditCertFile != "" || o.AuditKeyFile != "" || o.AuditClientCAFile != "" || o.AuditAllowedNames != ""
	switch {
	case o.AuditBindAddress == "" && (o.AuditInsecure || tlsFlags):
		return fmt.Errorf("--audit-* flags need --audit-bind-address: the address of the audit webhook that turns attribution on")
	case o.AuditBindAddress != "" && o.AuditInsecure && tlsFlags:
		return fmt.Errorf("--audit-insecure serves plain HTTP: leave out --audit-cert-file, --audit-key-file, --audit-client-ca-file and --audit-allowed-names")
	case o.AuditBindAddress != "" && !o.AuditInsecure && (o.AuditCertFile == "" || o.AuditKeyFile == "" || o.AuditClientCAFile == ""):
		return fmt.Errorf("the audit webhook needs --audit-cert-file, --audit-key-file and --audit-client-ca-file (kube-apiserver's client certificate is verified), or --audit-insecure for local use")
	case o.AttributionGrace < 0:
		return fmt.Errorf("--attribution-grace must not be negative")
	case o.DefaultServiceAccount != "" && len(validation.IsDNS1123Subdomain(o.DefaultServiceAccount)) > 0:
		return fmt.Errorf("--default-service-account %q is not a service account name: %s", o.DefaultServiceAccount,
			strings.Join(validation.IsDNS1123Subdomain(o.DefaultServiceAccount), "; "))
	case o.StatusResync < 0:
		return fmt.Errorf("--status-resync must not be negative (0 means the default, %s)", controller.DefaultStatusResync)
	}
	_, err := ParseSensitiveTypes(o.SensitiveTypes)
	return err
}

// AllowedNames splits --audit-allowed-names.
func (o *Options) AllowedNames() []string {
	var out []string
	for _, n := range strings.Split(o.AuditAllowedNames, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ParseSensitiveTypes reads --sensitive-types: comma-separated resource.group names.
func ParseSensitiveTypes(list string) (watch.SensitiveTypes, error) {
	out := watch.SensitiveTypes{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		gr := schema.ParseGroupResource(item)
		if gr.Resource == "" || strings.ContainsAny(item, "/ ") {
			return nil, fmt.Errorf("--sensitive-types: %q is not resource.group (core types: the plural resource alone)", item)
		}
		out[gr] = true
	}
	return out, nil
}

// defaultStateNamespace is the operator's own namespace in a cluster (the downward API's
// POD_NAMESPACE), else "default".
func defaultStateNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "default"
}
