package operator

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestAKubeconfigFlagIsNotThrottledMoreThanInCluster(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: "t"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RestConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 {
		t.Fatalf("QPS %v: client-go's default throttling (5/s) applies to --kubeconfig", cfg.QPS)
	}
}

func TestAuditFlagsAreCheckedTogether(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"off", Options{}, true},
		{"insecure for local use", Options{AuditBindAddress: "127.0.0.1:9443", AuditInsecure: true}, true},
		{"TLS with client CA", Options{AuditBindAddress: ":9443", AuditCertFile: "c", AuditKeyFile: "k", AuditClientCAFile: "ca"}, true},
		{"TLS without client CA", Options{AuditBindAddress: ":9443", AuditCertFile: "c", AuditKeyFile: "k"}, false},
		{"insecure and TLS", Options{AuditBindAddress: ":9443", AuditInsecure: true, AuditCertFile: "c"}, false},
		{"TLS files without an address", Options{AuditCertFile: "c"}, false},
		{"negative grace", Options{AttributionGrace: -1}, false},
		{"negative status resync", Options{StatusResync: -time.Second}, false},
	}
	for _, c := range cases {
		if err := c.opts.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: Validate() = %v", c.name, err)
		}
	}
}

func TestSensitiveTypesAreReadAsResourceDotGroup(t *testing.T) {
	got, err := ParseSensitiveTypes(" configmaps, certificates.cert-manager.io ,")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[schema.GroupResource{Resource: "configmaps"}] || !got[schema.GroupResource{Group: "cert-manager.io", Resource: "certificates"}] {
		t.Fatalf("parsed %v", got)
	}
	if _, err := ParseSensitiveTypes("apps/v1/deployments"); err == nil {
		t.Fatal("a GVR path was accepted")
	}
}

// The operator keeps no Secret's data in memory: the client reads Secrets from the API
// server (they are not cached), and the controllers watch Secrets' metadata only.
func TestSecretsAreNotCached(t *testing.T) {
	o := managerOptions(Options{}, nil)
	if o.Client.Cache == nil || !slices.ContainsFunc(o.Client.Cache.DisableFor, func(obj client.Object) bool {
		_, secret := obj.(*corev1.Secret)
		return secret
	}) {
		t.Fatalf("Secrets are read through the cache: %+v", o.Client.Cache)
	}
	// What the metadata-only watch caches of a Secret holds none of its data: kubectl apply
	// keeps the whole Secret in an annotation.
	secret := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "s", Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"c2VjcmV0"}}`},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	got, err := o.Cache.DefaultTransform(secret)
	if err != nil {
		t.Fatal(err)
	}
	if m := got.(*metav1.PartialObjectMetadata); len(m.Annotations) != 0 || len(m.ManagedFields) != 0 {
		t.Fatalf("a cached Secret keeps %v and %d managed fields", m.Annotations, len(m.ManagedFields))
	}
}
