//go:build e2e

package twoway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// Every scenario runs against both GitOps appliers, one subtest each: what differs between
// them is set up here.
type gitopsApplier interface {
	String() string // the subtest's name
	// crds installs the applier's CRDs on the control plane.
	crds(t testing.TB) testenv.ControlPlaneOption
	// start runs the applier's controllers against the loop's control plane and gives
	// them the repository's credentials.
	start(l *loop)
	// source makes the applier object name apply folder of main (first apply included).
	source(l *loop, name, folder string)
	// trigger creates the trigger "apps" of the loop's namespace naming the applier object
	// "apps"; triggerKind is its kind.
	trigger(l *loop)
	triggerKind() string
	// owns reports whether the applier object name applied obj (so that a Git-side delete
	// of its document prunes it).
	owns(obj metav1.Object, name string) bool
	// applied reports whether the applier object "apps" applied some commit.
	applied(l *loop) bool
	// suspend stops the applier object "apps" from applying (its applies fail) or lets it
	// again.
	suspend(l *loop, on bool)
}

var appliers = []gitopsApplier{fluxApplier{}, argoCDApplier{}}

// eachApplier runs scenario once per applier.
func eachApplier(t *testing.T, scenario func(t *testing.T, a gitopsApplier)) {
	for _, a := range appliers {
		t.Run(a.String(), func(t *testing.T) { scenario(t, a) })
	}
}

// fluxApplier: a GitRepository "fleet" of main and one Kustomization per folder, each with
// an hour's interval: after their first reconcile only the operator's requests make them act.
type fluxApplier struct{}

func (fluxApplier) String() string { return "flux" }

func (fluxApplier) crds(t testing.TB) testenv.ControlPlaneOption { return testenv.WithFluxCRDs(t) }

func (fluxApplier) start(l *loop) {
	testenv.StartFlux(l.t, l.cp)
	l.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testenv.FluxNamespace, Name: "git"}, StringData: map[string]string{"username": "bot", "password": "s3cret-pass"}})
	repo := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "fleet", "namespace": testenv.FluxNamespace},
		"spec": map[string]any{"url": l.front.URL("fleet.git"), "interval": "1h",
			"ref": map[string]any{"branch": "main"}, "secretRef": map[string]any{"name": "git"}},
	}}
	repo.SetGroupVersionKind(applier.GitRepositoryGVK)
	l.create(repo)
}

func (fluxApplier) source(l *loop, name, folder string) {
	// The GitRepository fetches the tip first: a folder pushed since it last fetched would
	// be missing, and the Kustomization would not try again for an hour.
	fetched := fmt.Sprintf("twoway-%d", time.Now().UnixNano())
	l.patchFluxObject(applier.GitRepositoryGVK, "fleet", fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, applier.RequestedAtAnnotation, fetched))
	waitFor(l.t, "the GitRepository to fetch the tip", func() bool {
		handled, _, _ := unstructured.NestedString(l.applierObjectNamed(applier.GitRepositoryGVK, testenv.FluxNamespace, "fleet").Object, "status", "lastHandledReconcileAt")
		return handled == fetched
	})
	ks := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": testenv.FluxNamespace},
		"spec": map[string]any{"interval": "1h", "path": "./" + folder, "prune": true,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet"}},
	}}
	ks.SetGroupVersionKind(applier.KustomizationGVK)
	l.create(ks)
}

func (fluxApplier) trigger(l *loop) {
	l.create(&v1.FluxTrigger{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "apps"}, Spec: v1.FluxTriggerSpec{
		KustomizationRef: v1.KustomizationReference{Name: "apps", Namespace: testenv.FluxNamespace}}})
}

func (fluxApplier) triggerKind() string { return "FluxTrigger" }

func (fluxApplier) owns(obj metav1.Object, name string) bool {
	return obj.GetLabels()["kustomize.toolkit.fluxcd.io/name"] == name
}

func (fluxApplier) applied(l *loop) bool {
	rev, _, _ := unstructured.NestedString(l.applierObject(applier.KustomizationGVK, testenv.FluxNamespace).Object, "status", "lastAppliedRevision")
	return rev != ""
}

func (fluxApplier) suspend(l *loop, on bool) {
	l.patchApplierObject(applier.KustomizationGVK, testenv.FluxNamespace, map[bool]string{
		true: `{"spec":{"suspend":true}}`, false: `{"spec":{"suspend":false}}`}[on])
}

// argoCDApplier: one Application per folder in Argo CD's namespace, of main, without an
// automated sync policy: after the first sync (asked by the set-up, as a user would) only the
// operator's requests make it act.
type argoCDApplier struct{}

func (argoCDApplier) String() string { return "argocd" }

func (argoCDApplier) crds(t testing.TB) testenv.ControlPlaneOption { return testenv.WithArgoCDCRDs(t) }

func (argoCDApplier) start(l *loop) {
	a := testenv.StartArgoCD(l.t, l.cp)
	a.AddRepository(l.t, l.front.URL("fleet.git"), "bot", "s3cret-pass")
}

func (argoCDApplier) source(l *loop, name, folder string) {
	app := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": testenv.ArgoCDNamespace},
		"spec": map[string]any{
			"project": "default",
			"source": map[string]any{"repoURL": l.front.URL("fleet.git"), "targetRevision": "main", "path": folder,
				"directory": map[string]any{"recurse": true}},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": l.ns},
			// Argo CD prunes with foreground deletion by default, which waits for the
			// garbage collector: the test control plane runs none.
			"syncPolicy": map[string]any{"syncOptions": []any{"PrunePropagationPolicy=background"}},
		},
	}}
	app.SetGroupVersionKind(applier.ApplicationGVK)
	l.create(app)
	// The first sync, as a user makes it once: of the branch, pruning.
	patch := `{"operation":{"initiatedBy":{"username":"twoway-test"},"sync":{"revision":"main","prune":true,"syncOptions":["PrunePropagationPolicy=background"]}}}`
	if err := l.cp.Client.Patch(l.ctx(), app, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		l.t.Fatalf("sync Application %s: %v", name, err)
	}
}

func (argoCDApplier) trigger(l *loop) {
	l.create(&v1.ArgoCDTrigger{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "apps"}, Spec: v1.ArgoCDTriggerSpec{
		ApplicationRef: v1.ApplicationReference{Name: "apps", Namespace: testenv.ArgoCDNamespace}}})
}

func (argoCDApplier) triggerKind() string { return "ArgoCDTrigger" }

// owns reads the tracking annotation: an Application of Argo CD's own namespace marks what
// it applies "<name>:<group>/<kind>:<namespace>/<name>".
func (argoCDApplier) owns(obj metav1.Object, name string) bool {
	return strings.HasPrefix(obj.GetAnnotations()["argocd.argoproj.io/tracking-id"], name+":")
}

func (argoCDApplier) applied(l *loop) bool {
	phase, _, _ := unstructured.NestedString(l.applierObject(applier.ApplicationGVK, testenv.ArgoCDNamespace).Object, "status", "operationState", "phase")
	return phase == "Succeeded"
}

// suspend points the Application at another branch: the operator refuses to ask it
// (Misconfigured) and retries until it follows main again.
func (argoCDApplier) suspend(l *loop, on bool) {
	l.patchApplierObject(applier.ApplicationGVK, testenv.ArgoCDNamespace, map[bool]string{
		true: `{"spec":{"source":{"targetRevision":"suspended"}}}`, false: `{"spec":{"source":{"targetRevision":"main"}}}`}[on])
}

// applierObject reads the applier object "apps"; empty when it cannot.
func (l *loop) applierObject(gvk schema.GroupVersionKind, ns string) *unstructured.Unstructured {
	return l.applierObjectNamed(gvk, ns, "apps")
}

// applierObjectNamed reads an applier's object; empty when it cannot.
func (l *loop) applierObjectNamed(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	_ = l.cp.Client.Get(l.ctx(), client.ObjectKey{Namespace: ns, Name: name}, obj)
	return obj
}

// patchFluxObject merge-patches an object of Flux's namespace.
func (l *loop) patchFluxObject(gvk schema.GroupVersionKind, name, patch string) {
	l.patchObject(gvk, testenv.FluxNamespace, name, patch)
}

// patchApplierObject merge-patches the applier object "apps".
func (l *loop) patchApplierObject(gvk schema.GroupVersionKind, ns, patch string) {
	l.patchObject(gvk, ns, "apps", patch)
}

func (l *loop) patchObject(gvk schema.GroupVersionKind, ns, name, patch string) {
	l.t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(ns)
	obj.SetName(name)
	if err := l.cp.Client.Patch(l.ctx(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		l.t.Fatal(err)
	}
}
