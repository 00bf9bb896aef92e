//go:build e2e

package attribution

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func startAuditedControlPlane(t *testing.T, kubeconfig string, extra ...testenv.ControlPlaneOption) *testenv.ControlPlane {
	t.Helper()
	return testenv.NewControlPlane(t, append(testenv.WithAuditWebhook(t, kubeconfig), extra...)...)
}

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func keyOf(ev watch.Event) ObjectKey {
	cm := ev.Object.(*corev1.ConfigMap)
	return ObjectKey{
		Resource: cmGR, Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID),
		ResourceVersion: cm.ResourceVersion, Deleted: ev.Type == watch.Deleted,
	}
}

func TestAuthorsOfARealAPIServersChangesJoinByUIDAndResourceVersion(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	srv := startServer(t, ServerConfig{BindAddress: "127.0.0.1:0", Insecure: true}, idx)
	cp := startAuditedControlPlane(t, testenv.WebhookKubeconfig(srv.URL(), "", "", ""))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	admin := clientset(t, cp.Config)
	const ns = "attribution"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A Role of its own: the aggregated "edit" role stays empty without a controller manager.
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	userConfig := func(name string) *rest.Config {
		cfg, err := cp.AddUser(name, "system:masters")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	alice, bob, erin := clientset(t, userConfig("alice")), clientset(t, userConfig("bob")), userConfig("erin")
	saCfg := rest.CopyConfig(cp.Config)
	saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":deployer"}
	erinAsFrank := rest.CopyConfig(erin)
	erinAsFrank.Impersonate = rest.ImpersonationConfig{UserName: "frank", Groups: []string{"system:masters"}}

	w, err := admin.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// alice creates, bob edits, frank (erin impersonating him, as kubectl --as does)
	// edits, the service account deletes.
	cm, err := alice.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "2"
	if _, err = bob.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err = clientset(t, erinAsFrank).CoreV1().ConfigMaps(ns).Patch(ctx, "app", "application/merge-patch+json", []byte(`{"data":{"k":"3"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// A dry run and a failed request: ignored, never facts.
	if _, err = bob.CoreV1().ConfigMaps(ns).Patch(ctx, "app", "application/merge-patch+json", []byte(`{"data":{"k":"dry"}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err = bob.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err == nil {
		t.Fatal("a second create of the same name succeeded")
	}
	if err = clientset(t, saCfg).CoreV1().ConfigMaps(ns).Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	want := []struct {
		typ          watch.EventType
		author       string
		impersonator string
	}{
		{watch.Added, "alice", ""},
		{watch.Modified, "bob", ""},
		{watch.Modified, "frank", "erin"},
		{watch.Deleted, "system:serviceaccount:" + ns + ":deployer", "admin"}, // envtest's administrator,
	}
	for i, wnt := range want {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-ctx.Done():
			t.Fatalf("watch event %d: %v", i, ctx.Err())
		}
		if ev.Type != wnt.typ {
			t.Fatalf("watch event %d is %s, want %s", i, ev.Type, wnt.typ)
		}
		key := keyOf(ev)
		a, tier := idx.Resolve(ctx, key, 30*time.Second)
		t.Logf("%s rv %s: %s (impersonator %q, audit %s) at tier %s", ev.Type, key.ResourceVersion, a.Name, a.Impersonator, a.AuditID, tier)
		wantTier := TierExact
		if ev.Type == watch.Deleted {
			// The DELETE response names the object as it was; its watch event carries
			// the deletion's revision, so a delete joins by uid.
			wantTier = TierUID
		}
		if a.Name != wnt.author || tier != wantTier || a.AuditID == "" {
			t.Errorf("%s: author %q at %s, want %q at %s", ev.Type, a.Name, tier, wnt.author, wantTier)
		}
		if wnt.impersonator != "" && !strings.HasPrefix(a.Impersonator, wnt.impersonator) {
			t.Errorf("%s: impersonator %q, want %q", ev.Type, a.Impersonator, wnt.impersonator)
		}
		if len(Trailers(a)) < 2 {
			t.Errorf("%s: trailers %q", ev.Type, Trailers(a))
		}
	}
	// carol deletes 50 ConfigMaps with one deletecollection: every delete is hers.
	const n = 50
	for i := range n {
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bulk-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := clientset(t, userConfig("carol")).CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	for deleted := 0; deleted < n; {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-ctx.Done():
			t.Fatalf("after %d deletes: %v", deleted, ctx.Err())
		}
		if ev.Type != watch.Deleted {
			continue
		}
		deleted++
		a, tier := idx.Resolve(ctx, keyOf(ev), 30*time.Second)
		if a.Name != "carol" || tier != TierCollection {
			t.Errorf("%s: author %q at %s, want carol at collection", keyOf(ev).Name, a.Name, tier)
		}
	}

	c := idx.Counters()
	deadline := time.Now().Add(30 * time.Second)
	for c.Ignored(IgnoredDryRun) < 1 || c.Ignored(IgnoredFailed) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("ignored: dry-run %d, failed %d", c.Ignored(IgnoredDryRun), c.Ignored(IgnoredFailed))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("accepted %d; ignored stage %d read-only %d dry-run %d failed %d subresource %d resource %d",
		c.Accepted(), c.Ignored(IgnoredStage), c.Ignored(IgnoredReadOnly), c.Ignored(IgnoredDryRun), c.Ignored(IgnoredFailed), c.Ignored(IgnoredSubresource), c.Ignored(IgnoredResource))
	for _, r := range RefuseReasons() {
		if c.Refused(r) != 0 {
			t.Errorf("refused %s: %d", r, c.Refused(r))
		}
	}
}

func TestAuditOverMutualTLSFromARealAPIServer(t *testing.T) {
	serverCA, clientCA := newTestCA(t, "audit-server-ca"), newTestCA(t, "audit-client-ca")
	idx := NewIndex(IndexConfig{})
	srv := startServer(t, tlsFiles(t, serverCA, clientCA), idx)
	cert, key := clientCA.Issue(t, "kube-apiserver", false)
	cp := startAuditedControlPlane(t, testenv.WebhookKubeconfig(srv.URL(), string(serverCA.PEM), string(cert), string(key)))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cfg, err := cp.AddUser("alice", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	cm, err := clientset(t, cfg).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tls"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, tier := idx.Resolve(ctx, ObjectKey{Resource: cmGR, Namespace: "default", Name: "tls", UID: string(cm.UID), ResourceVersion: cm.ResourceVersion}, 30*time.Second)
	if a.Name != "alice" || tier != TierExact {
		t.Fatalf("author %q at %s, want alice at exact", a.Name, tier)
	}
	if n := idx.Counters().Refused(RefusedBadClientCert); n != 0 {
		t.Fatalf("kube-apiserver's certificate refused %d times", n)
	}
}

func TestUnreachableWebhookLeavesChangesUnresolved(t *testing.T) {
	// An address nothing listens on: kube-apiserver's batches fail and are dropped.
	idx := NewIndex(IndexConfig{})
	probe, err := NewServer(ServerConfig{BindAddress: "127.0.0.1:0", Insecure: true}, idx)
	if err != nil {
		t.Fatal(err)
	}
	url, addr := probe.URL(), probe.Addr().String()
	_ = probe.ln.Close()
	// kube-apiserver flushes its audit buffer before it stops: the webhook comes back
	// before the control plane is stopped (cleanups run last-in first-out) and goes away
	// after, or the stop times out.
	reviveCtx, stopRevived := context.WithCancel(context.Background())
	revived := make(chan struct{})
	t.Cleanup(func() { stopRevived(); <-revived })
	cp := startAuditedControlPlane(t, testenv.WebhookKubeconfig(url, "", "", ""),
		testenv.WithAPIServerFlag("audit-webhook-initial-backoff", "200ms"))
	t.Cleanup(func() {
		srv, err := NewServer(ServerConfig{BindAddress: addr, Insecure: true}, NewIndex(IndexConfig{}))
		if err != nil {
			close(revived)
			t.Logf("revive webhook: %v", err)
			return
		}
		go func() { _ = srv.Start(reviveCtx); close(revived) }()
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cm, err := clientset(t, cp.Config).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lonely"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, tier := idx.Resolve(ctx, ObjectKey{Resource: cmGR, Namespace: "default", Name: "lonely", UID: string(cm.UID), ResourceVersion: cm.ResourceVersion}, 2*time.Second)
	if tier != TierUnresolved || a.Name != UnresolvedName || a.Email != UnresolvedEmail {
		t.Fatalf("author %+v at %s, want unresolved", a, tier)
	}
}
