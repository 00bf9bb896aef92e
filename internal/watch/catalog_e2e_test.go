//go:build e2e

package watch

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// startCatalog runs a catalog on disco until the test ends and waits for its first refresh.
func startCatalog(t *testing.T, disco discovery.DiscoveryInterface, opts ...CatalogOption) *Catalog {
	t.Helper()
	cat := NewCatalog(disco, testr.New(t), opts...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cat.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := cat.WaitSynced(wctx); err != nil {
		t.Fatalf("catalog never synced: %v (last refresh %+v)", err, cat.LastRefresh())
	}
	return cat
}

// eventually polls cond every 100ms until it holds or a generous deadline passes; each
// poll first calls poke (when not nil).
func eventually(t *testing.T, what string, poke func(), cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if poke != nil {
			poke()
		}
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func crd(group, plural, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	return u
}

func TestCatalogFollowsCRDs(t *testing.T) {
	ctx := context.Background()
	triggered := startCatalog(t, discovery.NewDiscoveryClientForConfigOrDie(sharedCP.Config), WithRefreshInterval(time.Hour))
	periodic := startCatalog(t, discovery.NewDiscoveryClientForConfigOrDie(sharedCP.Config), WithRefreshInterval(300*time.Millisecond))

	if r, ok := triggered.Lookup("", "configmaps"); !ok || r.GVR.Version != "v1" || r.Kind != "ConfigMap" || !r.Namespaced {
		t.Errorf("configmaps = %+v, %v", r, ok)
	}
	if r, ok := triggered.Lookup("apps", "deployments"); !ok || r.GVR.Version != "v1" || r.Kind != "Deployment" {
		t.Errorf("deployments = %+v, %v", r, ok)
	}
	if _, ok := triggered.Lookup("", "pods/log"); ok {
		t.Error("a subresource is listed")
	}
	if _, ok := triggered.Lookup("authorization.k8s.io", "subjectaccessreviews"); ok {
		t.Error("a create-only type is listed")
	}
	if _, ok := triggered.Lookup("gitops-reverser.io", "gittargets"); !ok {
		t.Error("the project's own CRDs are missing")
	}

	const group = "catalog.e2e.gitops-reverser.io"
	v0 := triggered.Version()
	changed := triggered.Changes()
	c := crd(group, "gizmos", "Gizmo")
	if err := sharedCP.Client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sharedCP.Client.Delete(context.Background(), c) })

	found := func(cat *Catalog) func() bool {
		return func() bool {
			r, ok := cat.Lookup(group, "gizmos")
			return ok && r.Kind == "Gizmo" && r.GVR.Version == "v1"
		}
	}
	eventually(t, "Refresh finds the new CRD", triggered.Refresh, found(triggered))
	if triggered.Version() <= v0 {
		t.Errorf("version %d did not grow from %d", triggered.Version(), v0)
	}
	select {
	case <-changed:
	default:
		t.Error("Changes was not closed on a change")
	}
	eventually(t, "the periodic refresh finds the new CRD", nil, found(periodic))

	if err := sharedCP.Client.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	gone := func(cat *Catalog) func() bool {
		return func() bool { _, ok := cat.Lookup(group, "gizmos"); return !ok }
	}
	eventually(t, "Refresh drops the deleted CRD", triggered.Refresh, gone(triggered))
	eventually(t, "the periodic refresh drops the deleted CRD", nil, gone(periodic))
	if _, ok := triggered.Lookup("", "configmaps"); !ok {
		t.Error("configmaps went missing")
	}
}

// blinkTransport answers 503 to every request whose path starts with the prefix it holds.
type blinkTransport struct {
	next   http.RoundTripper
	prefix atomic.Pointer[string]
}

func (b *blinkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if p := b.prefix.Load(); p != nil && strings.HasPrefix(req.URL.Path, *p) {
		return &http.Response{
			StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
			Header: http.Header{"Content-Type": []string{"text/plain"}}, Body: io.NopCloser(strings.NewReader("blink")),
			Request: req, ProtoMajor: 1, ProtoMinor: 1,
		}, nil
	}
	return b.next.RoundTrip(req)
}

func TestCatalogKeepsResourcesThroughDiscoveryBlink(t *testing.T) {
	blink := &blinkTransport{}
	cfg := rest.CopyConfig(sharedCP.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { blink.next = rt; return blink }
	disco := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	// Per-group discovery documents, so that one group can fail while the others answer.
	disco.UseLegacyDiscovery = true
	cat := startCatalog(t, disco, WithRefreshInterval(time.Hour))
	v0, n0 := cat.Version(), cat.Snapshot().Len()
	if _, ok := cat.Lookup("apps", "deployments"); !ok {
		t.Fatal("deployments missing before the blink")
	}

	refreshed := func(check func(RefreshResult) bool) func() bool {
		from := cat.LastRefresh().Attempt
		return func() bool { r := cat.LastRefresh(); return r.Attempt > from && check(r) }
	}

	// One group fails: its resources stay.
	p := "/apis/apps/"
	blink.prefix.Store(&p)
	eventually(t, "a refresh sees apps fail", cat.Refresh, refreshed(func(r RefreshResult) bool {
		return r.Err == nil && len(r.FailedGroupVersions) == 1 && r.FailedGroupVersions[0] == "apps/v1"
	}))
	if _, ok := cat.Lookup("apps", "deployments"); !ok {
		t.Error("a partial discovery failure removed deployments")
	}
	if cat.Version() != v0 || cat.Snapshot().Len() != n0 {
		t.Errorf("a partial discovery failure changed the catalog: version %d → %d, %d → %d types", v0, cat.Version(), n0, cat.Snapshot().Len())
	}

	// Discovery fails entirely: everything stays.
	all := "/api"
	blink.prefix.Store(&all)
	eventually(t, "a refresh fails entirely", cat.Refresh, refreshed(func(r RefreshResult) bool { return r.Err != nil }))
	if cat.Version() != v0 || cat.Snapshot().Len() != n0 {
		t.Errorf("a failed discovery changed the catalog: version %d → %d, %d → %d types", v0, cat.Version(), n0, cat.Snapshot().Len())
	}

	blink.prefix.Store(nil)
	eventually(t, "a refresh succeeds again", cat.Refresh, refreshed(func(r RefreshResult) bool {
		return r.Err == nil && len(r.FailedGroupVersions) == 0
	}))
	if _, ok := cat.Lookup("apps", "deployments"); !ok {
		t.Error("deployments missing after the blink")
	}
}
