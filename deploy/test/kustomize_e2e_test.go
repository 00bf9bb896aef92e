//go:build e2e

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const installNamespace = "gitops-reverser-system"

// kustomize renders the kustomization in dir as `kubectl apply -k` would.
func kustomize(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return decodeYAML(t, dir, out)
}

func TestConfigDefaultAppliesCleanly(t *testing.T) {
	objs := kustomize(t, filepath.Join(repoRoot(t), "config", "default"))
	want := map[string]int{
		"Namespace": 1, "CustomResourceDefinition": 7, "ServiceAccount": 1,
		"ClusterRole": 3, "ClusterRoleBinding": 2, "Role": 2, "RoleBinding": 2,
		"Deployment": 1, "Service": 1, "ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1,
	}
	if got := countKinds(objs); !equalCounts(got, want) {
		t.Fatalf("config/default renders %v, want %v", got, want)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if o.GetNamespace() != "" {
				t.Errorf("%s %s is cluster-scoped but has namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
			}
		default:
			if o.GetNamespace() != installNamespace {
				t.Errorf("%s %s is in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), installNamespace)
			}
		}
		if subjects, ok, _ := unstructured.NestedSlice(o.Object, "subjects"); ok {
			for _, s := range subjects {
				if ns := s.(map[string]any)["namespace"]; ns != installNamespace {
					t.Errorf("%s %s binds a subject in namespace %v", o.GetKind(), o.GetName(), ns)
				}
			}
		}
	}
	args := containerArgs(t, find(t, objs, "Deployment", "gitops-reverser"))
	for _, a := range []string{"run", "--leader-elect", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "--work-dir="} {
		if !hasArg(args, a) {
			t.Errorf("the Deployment's args %q lack %s", args, a)
		}
	}
	if hasArg(args, "--audit-") {
		t.Errorf("attribution is off by default, but the args are %q", args)
	}
	applyDryRun(t, objs)
}

// The audit component adds the webhook's Service, port, flags and certificate volume.
func TestAuditComponentAppliesCleanly(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	// Kustomize takes relative paths only.
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
		"resources:\n  - " + rel("config/default") + "\n" +
		"components:\n  - " + rel("config/components/audit") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	objs := kustomize(t, dir)
	svc := find(t, objs, "Service", "-audit")
	if svc.GetNamespace() != installNamespace {
		t.Errorf("audit Service in namespace %q", svc.GetNamespace())
	}
	args := containerArgs(t, find(t, objs, "Deployment", "gitops-reverser"))
	for _, a := range []string{"--audit-bind-address=:9443", "--audit-cert-file=", "--audit-key-file=", "--audit-client-ca-file="} {
		if !hasArg(args, a) {
			t.Errorf("the Deployment's args %q lack %s", args, a)
		}
	}
	applyDryRun(t, objs)
}

// The samples pass the CRDs' validation; and the dry-run does validate: a bad spec is
// refused.
func TestSamplesValidate(t *testing.T) {
	objs := kustomize(t, filepath.Join(repoRoot(t), "config", "samples"))
	want := map[string]int{"Secret": 1, "GitProvider": 1, "GitTarget": 1, "WatchRule": 1, "ClusterWatchRule": 1, "CommitRequest": 1}
	if got := countKinds(objs); !equalCounts(got, want) {
		t.Fatalf("config/samples renders %v, want %v", got, want)
	}
	applyDryRun(t, objs)

	bad := find(t, objs, "GitTarget", "live").DeepCopy()
	if err := unstructured.SetNestedField(bad.Object, "/clusters/prod", "spec", "path"); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	applyDryRun(rec, []*unstructured.Unstructured{bad})
	if !strings.Contains(rec.errors, "leading '/'") {
		t.Fatalf("a GitTarget with an absolute path was not refused by the dry-run: %q", rec.errors)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// recorder collects Errorf calls instead of failing, for tests that expect a refusal.
type recorder struct {
	testing.TB
	errors string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors += strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n"
}
