//go:build e2e

package applier

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// fluxRig is a control plane with Flux's CRDs, Flux's two controllers, and a Git server
// whose repository Flux fetches over HTTP with basic auth.
type fluxRig struct {
	t     *testing.T
	cp    *testenv.ControlPlane
	flux  *testenv.Flux
	git   *testenv.GitServer
	front *testenv.HTTPFrontend
	ns    string
}

func newFluxRig(t *testing.T) *fluxRig {
	t.Helper()
	cp := testenv.NewControlPlane(t, testenv.WithFluxCRDs(t))
	r := &fluxRig{t: t, cp: cp, flux: testenv.StartFlux(t, cp), git: testenv.NewGitServer(t), ns: "apps"}
	if err := r.git.CreateRepo("fleet.git"); err != nil {
		t.Fatal(err)
	}
	r.front = r.git.ServeHTTP(t, testenv.HTTPAuth{Username: "flux", Password: "flux-pass"})
	if err := cp.CreateNamespace(r.ctx(), r.ns, nil); err != nil {
		t.Fatal(err)
	}
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testenv.FluxNamespace, Name: "fleet-auth"},
		StringData: map[string]string{"username": "flux", "password": "flux-pass"}})
	return r
}

func (r *fluxRig) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	r.t.Cleanup(cancel)
	return ctx
}

func (r *fluxRig) create(obj client.Object) {
	r.t.Helper()
	if err := r.cp.Client.Create(r.ctx(), obj); err != nil {
		r.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// push commits a ConfigMap document (and any extra files) into apps/ of main.
func (r *fluxRig) push(value string, extra map[string]string) string {
	r.t.Helper()
	files := map[string]string{"apps/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: %s\ndata:\n  v: %q\n", r.ns, value)}
	for k, v := range extra {
		files[k] = v
	}
	sha, err := r.git.PushForeign("fleet.git", "main", testenv.ForeignChange{Files: files})
	if err != nil {
		r.t.Fatal(err)
	}
	return sha
}

// source creates a GitRepository of branch and a Kustomization of apps/ from it, both with
// an hour's interval, so that only a request makes them act.
func (r *fluxRig) source(name, branch string, suspend bool) types.NamespacedName {
	r.t.Helper()
	repo := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": testenv.FluxNamespace},
		"spec": map[string]any{"url": r.front.URL("fleet.git"), "interval": "1h",
			"ref": map[string]any{"branch": branch}, "secretRef": map[string]any{"name": "fleet-auth"}},
	}}
	repo.SetGroupVersionKind(GitRepositoryGVK)
	ks := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": testenv.FluxNamespace},
		"spec": map[string]any{"interval": "1h", "path": "./apps", "prune": true, "suspend": suspend,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": name}},
	}}
	ks.SetGroupVersionKind(KustomizationGVK)
	r.create(repo)
	r.create(ks)
	return types.NamespacedName{Namespace: testenv.FluxNamespace, Name: name}
}

func (r *fluxRig) liveValue() string {
	var cm corev1.ConfigMap
	if err := r.cp.Client.Get(r.ctx(), types.NamespacedName{Namespace: r.ns, Name: "app"}, &cm); err != nil {
		return ""
	}
	return cm.Data["v"]
}

func (r *fluxRig) applier() *Flux { return &Flux{Client: r.cp.Client, Timeout: 3 * time.Minute} }

// Flux fetches and applies exactly the commit asked for, and each way it cannot is a typed
// error that says what to do. The cases share one control plane and one Flux: starting them
// is most of the cost.
func TestFluxAppliesTheCommitItIsAskedFor(t *testing.T) {
	r := newFluxRig(t)
	first := r.push("1", nil)
	ks := r.source("fleet", "main", false)
	f := r.applier()

	applied, err := f.Apply(r.ctx(), ks, "main", first)
	if err != nil {
		t.Fatalf("apply of the first commit: %v", err)
	}
	if RevisionCommit(applied.Revision) != first || r.liveValue() != "1" {
		t.Fatalf("applied %s, live value %q; want commit %s and value 1", applied.Revision, r.liveValue(), first)
	}

	// A later commit, asked for at once: Flux fetches and applies exactly it.
	second := r.push("2", nil)
	if applied, err = f.Apply(r.ctx(), ks, "main", second); err != nil {
		t.Fatalf("apply of the second commit: %v", err)
	}
	if RevisionCommit(applied.Revision) != second || r.liveValue() != "2" {
		t.Fatalf("applied %s, live value %q; want commit %s and value 2", applied.Revision, r.liveValue(), second)
	}

	// The branch moved on past the commit asked for: Flux applies the tip, and says so.
	asked := r.push("3", nil)
	tip := r.push("4", nil)
	applied, err = f.Apply(r.ctx(), ks, "main", asked)
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonOtherRevision || RevisionCommit(applied.Revision) != tip {
		t.Fatalf("apply of a commit the branch moved past: %+v, %v; want OtherRevision with the tip %s", applied, err, tip)
	}

	t.Run("a file Flux cannot apply is its failure, with its message", func(t *testing.T) {
		broken := r.push("5", map[string]string{"apps/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [not, a, map]\n"})
		_, err := f.Apply(r.ctx(), ks, "main", broken)
		if !errors.As(err, &e) || e.Reason != ReasonFailed || e.Message == "" {
			t.Fatalf("apply of a broken commit: %v; want Failed with Flux's message", err)
		}
		t.Logf("Flux's refusal: %v", err)
	})
	t.Run("a missing Kustomization", func(t *testing.T) {
		_, err := f.Apply(r.ctx(), types.NamespacedName{Namespace: testenv.FluxNamespace, Name: "absent"}, "main", tip)
		if !errors.As(err, &e) || e.Reason != ReasonNotFound {
			t.Fatalf("apply through a missing Kustomization: %v; want NotFound", err)
		}
	})
	t.Run("a suspended Kustomization", func(t *testing.T) {
		_, err := f.Apply(r.ctx(), r.source("paused", "main", true), "main", tip)
		if !errors.As(err, &e) || e.Reason != ReasonSuspended {
			t.Fatalf("apply through a suspended Kustomization: %v; want Suspended", err)
		}
	})
	t.Run("a GitRepository of another branch", func(t *testing.T) {
		_, err := f.Apply(r.ctx(), r.source("elsewhere", "release", false), "main", tip)
		if !errors.As(err, &e) || e.Reason != ReasonMisconfigured {
			t.Fatalf("apply through a GitRepository of another branch: %v; want Misconfigured", err)
		}
	})
	if err := r.flux.Running(); err != nil {
		t.Fatal(err)
	}
}
