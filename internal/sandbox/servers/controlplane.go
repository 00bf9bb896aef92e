package servers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gitops-reverser/gitops-reverser/internal/kubescheme"
)

// ControlPlane is a running kube-apiserver and etcd with the project's CRDs installed.
type ControlPlane struct {
	env *envtest.Environment

	// Config authenticates as a cluster administrator.
	Config *rest.Config
	// Client is a controller-runtime client for Config, knowing the project's kinds.
	Client client.Client
	// Scheme knows the built-in kinds and the project's kinds.
	Scheme *runtime.Scheme
}

// ControlPlaneOption changes how the control plane is started.
type ControlPlaneOption func(*envtest.Environment)

// WithAPIServerFlag passes an extra flag to kube-apiserver, such as the audit webhook
// configuration used by attribution tests.
func WithAPIServerFlag(name, value string) ControlPlaneOption {
	return func(env *envtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
}

// WithCRDDirectory installs the CRDs of dir instead of the module's config/crd.
func WithCRDDirectory(dir string) ControlPlaneOption {
	return WithCRDDirectories(dir)
}

// WithCRDDirectories installs the CRDs of every dir (the module's config/crd only if listed).
// The directories of several such options add up, each installed once, so that options for
// different sets of CRDs (Flux's, Argo CD's) combine in any order.
func WithCRDDirectories(dirs ...string) ControlPlaneOption {
	return func(env *envtest.Environment) {
		for _, dir := range dirs {
			listed := slices.ContainsFunc(env.CRDDirectoryPaths, func(d string) bool {
				return filepath.Clean(d) == filepath.Clean(dir)
			})
			if !listed {
				env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, dir)
			}
		}
	}
}

// StartControlPlane starts kube-apiserver and etcd from KUBEBUILDER_ASSETS and installs the
// CRDs under config/crd. Stop it with Stop.
func StartControlPlane(opts ...ControlPlaneOption) (*ControlPlane, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with 'make test', " +
			"or export KUBEBUILDER_ASSETS=\"$(bash hack/tools/control-plane.sh)\"")
	}
	scheme, err := kubescheme.New()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
		// envtest waits 20 s for each process by default; kube-apiserver alone takes longer
		// than that on a loaded two-core machine starting several control planes at once.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	for _, opt := range opts {
		opt(env)
	}
	if len(env.CRDDirectoryPaths) == 0 {
		root, err := RepoRoot()
		if err != nil {
			return nil, err
		}
		env.CRDDirectoryPaths = []string{filepath.Join(root, "config", "crd")}
	}
	cfg, err := env.Start()
	if err != nil {
		// A failed start can leave a process of its last attempt running.
		_ = env.Stop()
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("client for control plane: %w", err)
	}
	return &ControlPlane{env: env, Config: cfg, Client: c, Scheme: scheme}, nil
}

// Stop stops kube-apiserver and etcd.
func (c *ControlPlane) Stop() error {
	return c.env.Stop()
}

// AddUser creates a user the API server authenticates (for attribution tests) and returns
// a client configuration that acts as that user.
func (c *ControlPlane) AddUser(name string, groups ...string) (*rest.Config, error) {
	user, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, c.Config)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	return user.Config(), nil
}

// WriteKubeconfig writes an administrator kubeconfig into dir and returns its path, so that
// the operator binary can run out of cluster against this control plane.
func (c *ControlPlane) WriteKubeconfig(dir string) (string, error) {
	user, err := c.env.AddUser(envtest.User{Name: "gitops-reverser-admin", Groups: []string{"system:masters"}}, c.Config)
	if err != nil {
		return "", fmt.Errorf("add admin user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("render kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

// CreateNamespace creates a namespace with the given labels.
func (c *ControlPlane) CreateNamespace(ctx context.Context, name string, labels map[string]string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := c.Client.Create(ctx, ns); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}
