//go:build e2e

package controller_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// An API server without watch cache whose etcd compacts every second answers a watch
// resumed from before a gap with 410 Gone: the stream must take a new snapshot.
func TestA410AfterAGapLandsTheGapInOneCommitWithNothingLost(t *testing.T) {
	own := testenv.NewControlPlane(t, testenv.WithAPIServerFlag("watch-cache", "false"),
		testenv.WithAPIServerFlag("etcd-compaction-interval", "1s"))
	c := own.Client
	ctx := ctxOf(t)
	if err := own.CreateNamespace(ctx, "gone", nil); err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	proxy, proxied := testenv.StartAPIServerProxy(t, own.Config)
	startOperator(t, proxied, t.TempDir())
	mustCreate := func(obj client.Object) {
		t.Helper()
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gone", Name: "auth"},
		StringData: map[string]string{"username": "bot", "password": "s3cret-pass"}})
	mustCreate(&v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "gone", Name: "origin"}, Spec: v1.GitProviderSpec{
		URL: r.url(), SecretRef: &v1.LocalObjectReference{Name: "auth"}, AllowedBranches: []string{"main"},
		Push: v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 300_000_000}}}})
	gt := target("gone", "live", "origin", "live", v1.PruneAlways)
	mustCreate(gt)
	mustCreate(watchRule("gone", "cms", "live", configMapsRule()))
	for _, n := range []string{"kept", "edited", "deleted"} {
		mustCreate(configMap("gone", n, map[string]string{"v": "1"}))
	}
	cmPath := func(name string) string { return "live/gone/core/configmaps/" + name + ".yaml" }
	waitFor(t, "the three ConfigMaps", func() bool { return r.has(cmPath("kept")) && r.has(cmPath("edited")) && r.has(cmPath("deleted")) })
	var before corev1.ConfigMapList
	if err := c.List(ctx, &before, client.InNamespace("gone")); err != nil {
		t.Fatal(err)
	}
	commits := len(r.log())

	proxy.SetDown(true)
	proxy.Cut()
	var edited corev1.ConfigMap
	if err := c.Get(ctx, keyOf("gone", "edited"), &edited); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"2", "3"} {
		edited.Data["v"] = v
		if err := c.Update(ctx, &edited); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Delete(ctx, configMap("gone", "deleted", nil)); err != nil {
		t.Fatal(err)
	}
	mustCreate(configMap("gone", "created", map[string]string{"v": "1"}))
	waitFor(t, "the revision before the gap to be compacted", func() bool {
		var list corev1.ConfigMapList
		err := c.List(context.Background(), &list, client.InNamespace("gone"),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: before.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}})
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
	})
	proxy.SetDown(false)

	waitFor(t, "Git to match the cluster after the gap", func() bool {
		return r.has(cmPath("created")) && !r.has(cmPath("deleted")) && strings.Contains(r.file(cmPath("edited")), `v: "3"`)
	})
	log := r.log()
	if got := len(log) - commits; got != 1 {
		t.Fatalf("%d commits for the gap, want one resync commit: %q", got, subjects(log[:got]))
	}
	if !r.has(cmPath("kept")) {
		t.Fatal("an untouched object's document was lost")
	}
}
