//go:build e2e

package test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// The operator works with exactly the permissions config/default grants its ServiceAccount:
// the RBAC objects are applied for real, and the operator runs impersonating the
// ServiceAccount, with leader election, while a ConfigMap is mirrored and a CommitRequest is
// answered.
func TestOperatorRunsWithTheInstalledRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ensureNamespace(t, ctx, installNamespace)
	for _, o := range kustomize(t, filepath.Join(repoRoot(t), "config", "default")) {
		switch o.GetKind() {
		case "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if err := cp.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o),
				client.FieldOwner("gitops-reverser-install-test"), client.ForceOwnership); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}

	kubeconfig := impersonatingKubeconfig(t, "system:serviceaccount:"+installNamespace+":gitops-reverser")
	// The impersonation holds: the ServiceAccount may not write what it mirrors.
	asSA, err := operator.RestConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	saClient, err := client.New(asSA, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	err = saClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: "not-allowed"}})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("the ServiceAccount created a ConfigMap (error %v); want Forbidden", err)
	}
	ns := "rbac-check"
	ensureNamespace(t, ctx, ns)
	writesOnlyDryRuns(t, ctx, saClient, ns)
	theExemptionsAreNarrow(t, ctx, saClient, ns)
	fluxPatchesAreAnnotationsOnly(t, ctx, saClient, ns)
	argoCDPatchesAreSyncRequestsOnly(t, ctx, saClient, ns)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- operator.Run(runCtx, operator.Options{
			Kubeconfig: kubeconfig, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
			LeaderElect: true, LeaderElectionID: "rbac-test", LeaderElectionNS: installNamespace,
			WorkDir: t.TempDir(), StateNamespace: installNamespace,
		})
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the operator did not stop within a minute")
		}
	})

	git := testenv.NewGitServer(t)
	if err := git.CreateRepo("mirror.git"); err != nil {
		t.Fatal(err)
	}
	front := git.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "s3cret-pass"})
	// The rule has the rights of a service account of its namespace (docs/tenancy.md): the
	// operator may ask the authorizer, and the policy lets it.
	mustCreate(t, ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mirror"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}})
	mustCreate(t, ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mirror"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "mirror"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "mirror", Namespace: ns}}})
	mustCreate(t, ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "auth"},
		StringData: map[string]string{"username": "bot", "password": "s3cret-pass"}})
	mustCreate(t, ctx, &v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "origin"}, Spec: v1.GitProviderSpec{
		URL: front.URL("mirror.git"), SecretRef: &v1.LocalObjectReference{Name: "auth"}, AllowedBranches: []string{"main"},
		Push: v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 200 * time.Millisecond}},
	}})
	gt := &v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "live"}, Spec: v1.GitTargetSpec{
		GitProviderRef: v1.GitProviderReference{Name: "origin"}, Branch: "main", Path: "live",
	}}
	mustCreate(t, ctx, gt)
	mustCreate(t, ctx, &v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cms"}, Spec: v1.WatchRuleSpec{
		TargetRef: v1.LocalObjectReference{Name: "live"}, ServiceAccountName: "mirror",
		Rules: []v1.ResourceRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}}},
	}})
	mustCreate(t, ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Data: map[string]string{"color": "blue"}})

	eventually(t, ctx, "the GitTarget Ready (status written by the operator)", func() bool {
		return cp.Client.Get(ctx, client.ObjectKeyFromObject(gt), gt) == nil &&
			meta.IsStatusConditionTrue(gt.Status.Conditions, v1.ConditionReady)
	})
	eventually(t, ctx, "the ConfigMap in Git", func() bool {
		b, err := git.ReadFile("mirror.git", "main", "live/"+ns+"/core/configmaps/app.yaml")
		return err == nil && strings.Contains(string(b), "color: blue")
	})
	cr := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "now"},
		Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "live"}, Message: "checkpoint"}}
	mustCreate(t, ctx, cr)
	eventually(t, ctx, "the CommitRequest answered", func() bool {
		return cp.Client.Get(ctx, client.ObjectKeyFromObject(cr), cr) == nil && cr.Status.SHA != ""
	})
	// A delete goes through the journal of deletes (docs/branch-worker.md#restart): the
	// policy lets the operator create and update that Secret, and it ends empty.
	if err := cp.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the delete in Git", func() bool {
		_, err := git.ReadFile("mirror.git", "main", "live/"+ns+"/core/configmaps/app.yaml")
		return err != nil
	})
	eventually(t, ctx, "the journal of deletes written and emptied again", func() bool {
		var journal corev1.Secret
		if cp.Client.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: "gitops-reverser-deletes"}, &journal) != nil {
			return false
		}
		entries, err := journalEntries(journal.Data["deletes.json.gz"])
		return err == nil && entries == 0
	})
	var lease coordinationv1.Lease
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: "rbac-test"}, &lease); err != nil {
		t.Fatalf("the leader election Lease: %v", err)
	}
}

// writesOnlyDryRuns shows the policy gitops-reverser-dry-run-only at work: RBAC lets the
// operator's ServiceAccount update any object (a server-side dry-run needs it), and the API
// server refuses every such update that is not a dry-run.
func writesOnlyDryRuns(t *testing.T, ctx context.Context, sa client.Client, ns string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workload"}, Data: map[string]string{"replicas": "1"}}
	mustCreate(t, ctx, cm)
	var refusal error
	eventually(t, ctx, "the policy to refuse the ServiceAccount's real update", func() bool {
		if err := sa.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			t.Fatalf("the ServiceAccount reads the ConfigMap: %v", err)
		}
		cm.Data["replicas"] = "100"
		refusal = sa.Update(ctx, cm)
		return refusal != nil
	})
	if !strings.Contains(refusal.Error(), "dry-run") {
		t.Fatalf("the real update was refused for another reason: %v", refusal)
	}
	// (Until the policy took effect, the updates went through: compare with the object as
	// it is now.)
	var before, after corev1.ConfigMap
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(cm), &before); err != nil {
		t.Fatal(err)
	}
	if err := sa.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["replicas"] = "1000"
	if err := sa.Update(ctx, cm, client.DryRunAll); err != nil {
		t.Fatalf("the ServiceAccount's server-side dry-run was refused: %v", err)
	}
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(cm), &after); err != nil || after.Data["replicas"] != before.Data["replicas"] {
		t.Fatalf("the ConfigMap after the dry-run: %v (before %v), %v", after.Data, before.Data, err)
	}
}

// theExemptionsAreNarrow shows that what the policy lets the operator write for itself is
// no more than that: another Secret of its namespace, a token Secret, a Lease elsewhere.
func theExemptionsAreNarrow(t *testing.T, ctx context.Context, sa client.Client, ns string) {
	t.Helper()
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: "someone-elses"}, StringData: map[string]string{"k": "v"}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "someone-elses"}}
	mustCreate(t, ctx, other)
	mustCreate(t, ctx, lease)
	if err := sa.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Fatal(err)
	}
	other.Data["k"] = []byte("changed")
	if err := sa.Update(ctx, other); err == nil || !strings.Contains(err.Error(), "dry-run") {
		t.Errorf("the ServiceAccount's update of another Secret of its namespace: %v; want the policy's refusal", err)
	}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: "minted",
		Annotations: map[string]string{"kubernetes.io/service-account.name": "default"}}, Type: corev1.SecretTypeServiceAccountToken}
	if err := sa.Create(ctx, token); err == nil || !strings.Contains(err.Error(), "dry-run") {
		t.Errorf("the ServiceAccount's create of a token Secret: %v; want the policy's refusal", err)
	}
	if err := sa.Get(ctx, client.ObjectKeyFromObject(lease), lease); err != nil {
		t.Fatal(err)
	}
	holder := "intruder"
	lease.Spec.HolderIdentity = &holder
	if err := sa.Update(ctx, lease); err == nil || !strings.Contains(err.Error(), "dry-run") {
		t.Errorf("the ServiceAccount's update of a Lease outside its namespace: %v; want the policy's refusal", err)
	}
}

// fluxPatchesAreAnnotationsOnly shows what the policy lets the operator change of a Flux
// Kustomization (docs/two-way.md): the requestedAt annotation, nothing else.
func fluxPatchesAreAnnotationsOnly(t *testing.T, ctx context.Context, sa client.Client, ns string) {
	t.Helper()
	ks := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "apps", "namespace": ns},
		"spec":     map[string]any{"interval": "1h", "prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": "apps"}},
	}}
	ks.SetGroupVersionKind(applier.KustomizationGVK)
	mustCreate(t, ctx, ks)
	patch := func(body string) error {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(applier.KustomizationGVK)
		obj.SetNamespace(ns)
		obj.SetName("apps")
		return sa.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)))
	}
	if err := patch(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"now"}}}`); err != nil {
		t.Errorf("the ServiceAccount's reconcile request was refused: %v", err)
	}
	for what, body := range map[string]string{
		"suspend it":                `{"spec":{"suspend":true}}`,
		"add another annotation":    `{"metadata":{"annotations":{"kustomize.toolkit.fluxcd.io/reconcile":"disabled"}}}`,
		"add a finalizer":           `{"metadata":{"finalizers":["example.com/hold"]}}`,
		"label it":                  `{"metadata":{"labels":{"x":"y"}}}`,
		"give it an owner":          `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"00000000-0000-0000-0000-000000000000"}]}}`,
		"change the request itself": `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"later"},"labels":{"x":"y"}}}`,
	} {
		if err := patch(body); err == nil || !strings.Contains(err.Error(), "dry-run") {
			t.Errorf("the ServiceAccount could %s: %v; want the policy's refusal", what, err)
		}
	}
}

// argoCDPatchesAreSyncRequestsOnly shows what the policy lets the operator change of an
// Argo CD Application (docs/two-way.md): the refresh annotation and a sync operation of one
// commit with the Application's own options, added where there is none, or withdrawn;
// nothing else.
func argoCDPatchesAreSyncRequestsOnly(t *testing.T, ctx context.Context, sa client.Client, ns string) {
	t.Helper()
	app := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "apps", "namespace": ns},
		"spec": map[string]any{"project": "default",
			"source":      map[string]any{"repoURL": "http://127.0.0.1/fleet.git", "targetRevision": "main", "path": "apps"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns},
			"syncPolicy":  map[string]any{"syncOptions": []any{"PrunePropagationPolicy=background"}}},
	}}
	app.SetGroupVersionKind(applier.ApplicationGVK)
	mustCreate(t, ctx, app)
	patch := func(body string) error {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(applier.ApplicationGVK)
		obj.SetNamespace(ns)
		obj.SetName("apps")
		return sa.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)))
	}
	commit := "0123456789abcdef0123456789abcdef01234567"
	op := func(sync string) string {
		return `{"operation":{"initiatedBy":{"username":"gitops-reverser"},"sync":` + sync + `}}`
	}
	for what, body := range map[string]string{
		"change its source":                 `{"spec":{"source":{"path":"elsewhere"}}}`,
		"turn on self-healing":              `{"spec":{"syncPolicy":{"automated":{"selfHeal":true}}}}`,
		"write its status":                  `{"status":{"sync":{"status":"Synced"}}}`,
		"add another annotation":            `{"metadata":{"annotations":{"argocd.argoproj.io/skip-reconcile":"true"}}}`,
		"add a finalizer":                   `{"metadata":{"finalizers":["resources-finalizer.argocd.argoproj.io"]}}`,
		"label it":                          `{"metadata":{"labels":{"x":"y"}}}`,
		"give it an owner":                  `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"00000000-0000-0000-0000-000000000000"}]}}`,
		"sync and change it too":            `{"operation":{"initiatedBy":{"username":"gitops-reverser"},"sync":{"revision":"` + commit + `","syncOptions":["PrunePropagationPolicy=background"]}},"spec":{"source":{"path":"elsewhere"}}}`,
		"sync manifests of its own":         op(`{"revision":"` + commit + `","syncOptions":["PrunePropagationPolicy=background"],"manifests":["kind: ClusterRoleBinding"]}`),
		"sync another source":               op(`{"revision":"` + commit + `","syncOptions":["PrunePropagationPolicy=background"],"source":{"repoURL":"http://evil.example/x.git","path":"."}}`),
		"force the sync":                    op(`{"revision":"` + commit + `","syncOptions":["PrunePropagationPolicy=background"],"syncStrategy":{"apply":{"force":true}}}`),
		"sync a branch instead of a commit": op(`{"revision":"main","syncOptions":["PrunePropagationPolicy=background"]}`),
		"sync with other options":           op(`{"revision":"` + commit + `","syncOptions":["Replace=true"]}`),
		"sync as someone else":              `{"operation":{"initiatedBy":{"username":"admin"},"sync":{"revision":"` + commit + `","syncOptions":["PrunePropagationPolicy=background"]}}}`,
	} {
		if err := patch(body); err == nil || !strings.Contains(err.Error(), "dry-run") {
			t.Errorf("the ServiceAccount could %s: %v; want the policy's refusal", what, err)
		}
	}
	// The applier's own request is admitted, once: a second would replace it.
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	request, err := applier.SyncPatch(app.GetResourceVersion(), commit, "a-token", []string{"PrunePropagationPolicy=background"})
	if err != nil {
		t.Fatal(err)
	}
	if err := patch(string(request)); err != nil {
		t.Fatalf("the ServiceAccount's sync request was refused: %v", err)
	}
	if err := patch(op(`{"revision":"` + commit + `","syncOptions":["PrunePropagationPolicy=background"]}`)); err == nil || !strings.Contains(err.Error(), "dry-run") {
		t.Errorf("the ServiceAccount could replace a queued operation: %v; want the policy's refusal", err)
	}
	if err := patch(`{"operation":null}`); err != nil {
		t.Errorf("the ServiceAccount could not withdraw its own queued operation: %v", err)
	}
}

// journalEntries counts the entries of the journal of deletes (gzip-compressed JSON).
func journalEntries(data []byte) (int, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	var entries []json.RawMessage
	if err := json.NewDecoder(r).Decode(&entries); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// impersonatingKubeconfig is a kubeconfig with the control plane's admin certificate that
// acts as user (as kubectl --as does).
func impersonatingKubeconfig(t testing.TB, user string) string {
	t.Helper()
	cfg := cp.Config
	b64 := base64.StdEncoding.EncodeToString
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: test
  user: {client-certificate-data: %s, client-key-data: %s, as: %q}
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`, cfg.Host, b64(cfg.CAData), b64(cfg.CertData), b64(cfg.KeyData), user)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustCreate(t testing.TB, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := cp.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func eventually(t testing.TB, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
