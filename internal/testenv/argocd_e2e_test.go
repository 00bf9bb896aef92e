//go:build e2e

package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

var applicationGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

// TestArgoCDSyncsAFolderOfABranch runs the real Argo CD against a control plane and a Git
// server over HTTP with basic auth: an Application without an automated policy syncs a
// commit when asked to, and a later commit after a hard refresh.
func TestArgoCDSyncsAFolderOfABranch(t *testing.T) {
	step := stepTimer(t)
	cp := NewControlPlane(t, WithArgoCDCRDs(t))
	step("control plane with Argo CD's CRDs")
	argo := StartArgoCD(t, cp)
	step("StartArgoCD (redis-server, repo-server, application controller answering)")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	git := NewGitServer(t)
	if err := git.CreateRepo("fleet.git"); err != nil {
		t.Fatal(err)
	}
	sha1 := pushConfigMap(t, git, "one")
	front := git.ServeHTTP(t, HTTPAuth{Username: "argo", Password: "argo-pass"})
	if err := cp.CreateNamespace(ctx, "team", nil); err != nil {
		t.Fatal(err)
	}
	argo.AddRepository(t, front.URL("fleet.git"), "argo", "argo-pass")

	app := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "team", "namespace": ArgoCDNamespace},
		"spec": map[string]any{
			"project": "default",
			"source": map[string]any{
				"repoURL": front.URL("fleet.git"), "targetRevision": "main", "path": "apps",
				"directory": map[string]any{"recurse": true},
			},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "team"},
		},
	}}
	app.SetGroupVersionKind(applicationGVK)
	if err := cp.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	r := &argoRig{t: t, ctx: ctx, cp: cp, argo: argo, key: client.ObjectKeyFromObject(app)}
	step("Git server, repository Secret and Application created")

	r.waitApp("status.sync.status OutOfSync at "+sha1, func(app *unstructured.Unstructured) bool {
		status, _, _ := unstructured.NestedString(app.Object, "status", "sync", "status")
		revision, _, _ := unstructured.NestedString(app.Object, "status", "sync", "revision")
		return status == "OutOfSync" && revision == sha1
	})
	step("new Application compared: OutOfSync")

	r.requestSync(sha1)
	r.waitSynced(sha1)
	step("sync of the first commit: operationState Succeeded")
	cm := r.waitConfigMap("one")
	tracking := cm.Annotations["argocd.argoproj.io/tracking-id"]
	if tracking == "" {
		t.Fatalf("the synced ConfigMap has no tracking-id annotation: %v", cm.Annotations)
	}
	t.Logf("tracking-id: %s; managers: %v", tracking, managers(cm))
	step("ConfigMap on the cluster")

	sha2 := pushConfigMap(t, git, "two")
	refresh := []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"hard"}}}`)
	if err := cp.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, refresh)); err != nil {
		t.Fatal(err)
	}
	// The controller removes the annotation once it has refreshed.
	r.waitApp("hard refresh handled, OutOfSync at "+sha2, func(app *unstructured.Unstructured) bool {
		_, pending := app.GetAnnotations()["argocd.argoproj.io/refresh"]
		revision, _, _ := unstructured.NestedString(app.Object, "status", "sync", "revision")
		return !pending && revision == sha2
	})
	step("push + hard refresh: the new commit seen")
	r.requestSync(sha2)
	r.waitSynced(sha2)
	r.waitConfigMap("two")
	step("sync of the second commit: new value on the cluster")
}

// TestArgoCDAndFluxCRDsOnOneControlPlane: the CRD options add up, in either order.
func TestArgoCDAndFluxCRDsOnOneControlPlane(t *testing.T) {
	step := stepTimer(t)
	cp := NewControlPlane(t, WithArgoCDCRDs(t), WithFluxCRDs(t))
	step("control plane with the project's, Argo CD's and Flux's CRDs")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var providers v1.GitProviderList
	if err := cp.Client.List(ctx, &providers); err != nil {
		t.Errorf("the project's GitProvider CRD is not served: %v", err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "argoproj.io", Version: "v1alpha1", Kind: "ApplicationList"},
		{Group: "argoproj.io", Version: "v1alpha1", Kind: "AppProjectList"},
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepositoryList"},
		{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "KustomizationList"},
	} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := cp.Client.List(ctx, list); err != nil {
			t.Errorf("%s is not served: %v", gvk, err)
		}
	}
}

// stepTimer logs how long each step took since the previous one.
func stepTimer(t *testing.T) func(string) {
	last := time.Now()
	return func(what string) {
		t.Helper()
		t.Logf("%-75s %6.2fs", what, time.Since(last).Seconds())
		last = time.Now()
	}
}

func pushConfigMap(t *testing.T, git *GitServer, value string) string {
	t.Helper()
	doc := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: team\ndata:\n  v: %q\n", value)
	sha, err := git.PushForeign("fleet.git", "main", ForeignChange{Files: map[string]string{"apps/team/cm.yaml": doc}})
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// argoRig is the Application under test with what the waits need.
type argoRig struct {
	t    *testing.T
	ctx  context.Context
	cp   *ControlPlane
	argo *ArgoCD
	key  client.ObjectKey
}

// requestSync asks for a sync of revision, as `argocd app sync` does: an operation.
func (r *argoRig) requestSync(revision string) {
	r.t.Helper()
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(applicationGVK)
	app.SetNamespace(r.key.Namespace)
	app.SetName(r.key.Name)
	patch := fmt.Sprintf(`{"operation":{"initiatedBy":{"username":"operator"},"sync":{"revision":%q}}}`, revision)
	if err := r.cp.Client.Patch(r.ctx, app, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		r.t.Fatal(err)
	}
}

func (r *argoRig) waitSynced(sha string) {
	t := r.t
	t.Helper()
	r.waitApp("operationState Succeeded at "+sha, func(app *unstructured.Unstructured) bool {
		phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
		revision, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "syncResult", "revision")
		if phase == "Failed" || phase == "Error" {
			msg, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "message")
			t.Fatalf("sync of %s ended %s: %s", sha, phase, msg)
		}
		return phase == "Succeeded" && revision == sha
	})
}

// waitApp polls the Application until done holds (three minutes at most), failing early
// when a process of Argo CD exited.
func (r *argoRig) waitApp(what string, done func(*unstructured.Unstructured) bool) {
	t := r.t
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(applicationGVK)
	for {
		if err := r.argo.Running(); err != nil {
			t.Fatal(err)
		}
		err := r.cp.Client.Get(r.ctx, r.key, app)
		if err == nil && done(app) {
			return
		}
		if time.Now().After(deadline) {
			status, _, _ := unstructured.NestedMap(app.Object, "status")
			t.Fatalf("no %s within three minutes (get: %v); status: %v", what, err, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *argoRig) waitConfigMap(value string) *corev1.ConfigMap {
	t := r.t
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	cm := &corev1.ConfigMap{}
	for {
		err := r.cp.Client.Get(r.ctx, client.ObjectKey{Namespace: "team", Name: "app"}, cm)
		if err == nil && cm.Data["v"] == value {
			return cm
		}
		if time.Now().After(deadline) {
			t.Fatalf("ConfigMap team/app with v=%q not on the cluster within three minutes (get: %v; data: %v)", value, err, cm.Data)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func managers(cm *corev1.ConfigMap) []string {
	var out []string
	for _, f := range cm.ManagedFields {
		out = append(out, f.Manager+"/"+string(f.Operation))
	}
	return out
}
