//go:build e2e

package applier

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// argoRig is a control plane with Argo CD's CRDs, Argo CD's repo-server and application
// controller, and a Git server whose repository Argo CD reads over HTTP with basic auth.
type argoRig struct {
	t     *testing.T
	cp    *testenv.ControlPlane
	argo  *testenv.ArgoCD
	git   *testenv.GitServer
	front *testenv.HTTPFrontend
	ns    string
}

func newArgoRig(t *testing.T) *argoRig {
	t.Helper()
	cp := testenv.NewControlPlane(t, testenv.WithArgoCDCRDs(t))
	r := &argoRig{t: t, cp: cp, argo: testenv.StartArgoCD(t, cp), git: testenv.NewGitServer(t), ns: "apps"}
	if err := r.git.CreateRepo("fleet.git"); err != nil {
		t.Fatal(err)
	}
	r.front = r.git.ServeHTTP(t, testenv.HTTPAuth{Username: "argo", Password: "argo-pass"})
	r.argo.AddRepository(t, r.front.URL("fleet.git"), "argo", "argo-pass")
	if err := cp.CreateNamespace(r.ctx(), r.ns, nil); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *argoRig) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	r.t.Cleanup(cancel)
	return ctx
}

// push commits a ConfigMap document (and any extra files) into apps/ of main.
func (r *argoRig) push(value string, extra map[string]string) string {
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

// application creates an Application of folder at revision without an automated sync
// policy (spec changes the spec further), so that only a request makes it sync.
func (r *argoRig) application(name, folder, revision string, spec map[string]any) types.NamespacedName {
	r.t.Helper()
	s := map[string]any{
		"project": "default",
		"source": map[string]any{"repoURL": r.front.URL("fleet.git"), "targetRevision": revision, "path": folder,
			"directory": map[string]any{"recurse": true}},
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": r.ns},
		// The test control plane runs no garbage collector, which foreground deletion waits for.
		"syncPolicy": map[string]any{"syncOptions": []any{"PrunePropagationPolicy=background"}},
	}
	for k, v := range spec {
		s[k] = v
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": testenv.ArgoCDNamespace},
		"spec":     s,
	}}
	app.SetGroupVersionKind(ApplicationGVK)
	if err := r.cp.Client.Create(r.ctx(), app); err != nil {
		r.t.Fatalf("create Application %s: %v", name, err)
	}
	return client.ObjectKeyFromObject(app)
}

func (r *argoRig) liveValue() string {
	var cm corev1.ConfigMap
	if err := r.cp.Client.Get(r.ctx(), types.NamespacedName{Namespace: r.ns, Name: "app"}, &cm); err != nil {
		return ""
	}
	return cm.Data["v"]
}

// Argo CD syncs exactly the commit asked for — an older one too — and each way it cannot is
// a typed error that says what to do. The cases share one control plane and one Argo CD.
func TestArgoCDSyncsTheCommitItIsAskedFor(t *testing.T) {
	r := newArgoRig(t)
	first := r.push("1", nil)
	app := r.application("fleet", "apps", "main", nil)
	a := &ArgoCD{Client: r.cp.Client, Timeout: 3 * time.Minute}

	applied, err := a.Apply(r.ctx(), app, "main", first)
	if err != nil {
		t.Fatalf("sync of the first commit: %v", err)
	}
	if applied.Revision != first || r.liveValue() != "1" {
		t.Fatalf("synced %s, live value %q; want commit %s and value 1", applied.Revision, r.liveValue(), first)
	}

	// A later commit, asked for at once: the refresh makes Argo CD see it.
	second := r.push("2", nil)
	if applied, err = a.Apply(r.ctx(), app, "main", second); err != nil {
		t.Fatalf("sync of the second commit: %v", err)
	}
	if applied.Revision != second || r.liveValue() != "2" {
		t.Fatalf("synced %s, live value %q; want commit %s and value 2", applied.Revision, r.liveValue(), second)
	}

	// The branch moved on past the commit asked for: Argo CD still syncs exactly it.
	asked := r.push("3", nil)
	r.push("4", nil)
	if applied, err = a.Apply(r.ctx(), app, "main", asked); err != nil || applied.Revision != asked || r.liveValue() != "3" {
		t.Fatalf("sync of a commit the branch moved past: %+v, %v, live %q; want exactly %s (value 3)", applied, err, r.liveValue(), asked)
	}
	// The same commit again is a new operation, told apart from the last by its token.
	if applied, err = a.Apply(r.ctx(), app, "main", asked); err != nil || applied.Revision != asked {
		t.Fatalf("a second sync of the same commit: %+v, %v", applied, err)
	}

	var e *Error
	t.Run("a file Argo CD cannot apply is its failure, with its message", func(t *testing.T) {
		broken := r.push("5", map[string]string{"apps/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [not, a, map]\n"})
		_, err := a.Apply(r.ctx(), app, "main", broken)
		if !errors.As(err, &e) || e.Reason != ReasonFailed || e.Message == "" {
			t.Fatalf("sync of a broken commit: %v; want Failed with Argo CD's message", err)
		}
		t.Logf("Argo CD's refusal: %v", err)
	})
	t.Run("a missing Application", func(t *testing.T) {
		_, err := a.Apply(r.ctx(), types.NamespacedName{Namespace: testenv.ArgoCDNamespace, Name: "absent"}, "main", first)
		if !errors.As(err, &e) || e.Reason != ReasonNotFound {
			t.Fatalf("sync through a missing Application: %v; want NotFound", err)
		}
	})
	t.Run("an Application of another branch", func(t *testing.T) {
		_, err := a.Apply(r.ctx(), r.application("elsewhere", "apps", "release", nil), "main", first)
		if !errors.As(err, &e) || e.Reason != ReasonMisconfigured {
			t.Fatalf("sync through an Application of another branch: %v; want Misconfigured", err)
		}
	})
	t.Run("a self-healing Application", func(t *testing.T) {
		healing := map[string]any{"syncPolicy": map[string]any{"automated": map[string]any{"selfHeal": true}}}
		_, err := a.Apply(r.ctx(), r.application("healing", "apps", "main", healing), "main", first)
		if !errors.As(err, &e) || e.Reason != ReasonMisconfigured {
			t.Fatalf("sync through a self-healing Application: %v; want Misconfigured", err)
		}
	})
	t.Run("an operation that does not end", func(t *testing.T) {
		// A Deployment in the first sync wave never becomes healthy (no controller runs
		// it here), so the sync waits before the second wave for as long as it is let.
		stuck := r.push("6", map[string]string{"busy/deploy.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: never-ready
  namespace: %s
spec:
  selector: {matchLabels: {app: never-ready}}
  template:
    metadata: {labels: {app: never-ready}}
    spec: {containers: [{name: c, image: example.invalid/none}]}
`, r.ns), "busy/later.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: later\n  namespace: %s\n  annotations: {argocd.argoproj.io/sync-wave: \"1\"}\n", r.ns)})
		busy := r.application("busy", "busy", "main", nil)
		go func() {
			_, _ = (&ArgoCD{Client: r.cp.Client, Timeout: time.Minute}).Apply(context.Background(), busy, "main", stuck)
		}()
		waitRunning(t, r, busy)
		_, err := (&ArgoCD{Client: r.cp.Client, Timeout: 10 * time.Second}).Apply(r.ctx(), busy, "main", stuck)
		if !errors.As(err, &e) || e.Reason != ReasonOperationRunning {
			t.Fatalf("sync while another operation runs: %v; want OperationRunning", err)
		}
	})
	if err := r.argo.Running(); err != nil {
		t.Fatal(err)
	}
}

// waitRunning waits until the Application runs an operation.
func waitRunning(t *testing.T, r *argoRig, key types.NamespacedName) {
	t.Helper()
	end := time.Now().Add(3 * time.Minute)
	for {
		app := &unstructured.Unstructured{}
		app.SetGroupVersionKind(ApplicationGVK)
		if err := r.cp.Client.Get(r.ctx(), key, app); err == nil {
			if phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase"); phase == "Running" {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatalf("Application %s never ran an operation", key)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
