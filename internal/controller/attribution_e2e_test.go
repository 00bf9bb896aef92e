//go:build e2e

package controller_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// audited starts a control plane whose audit webhook is the operator's, and the operator
// with attribution on.
func audited(t *testing.T) (*testenv.ControlPlane, *repo, string) {
	t.Helper()
	addr, metricsAddr := testenv.LoopbackAddress(t), testenv.LoopbackAddress(t)
	own := auditedControlPlane(t, addr)
	r := newRepo(t)
	startOperatorWith(t, own.Config, t.TempDir(), func(o *operator.Options) {
		o.AuditBindAddress, o.AuditInsecure, o.AttributionGrace = addr, true, 10*time.Second
		o.MetricsBindAddress = metricsAddr
	})
	return own, r, metricsAddr
}

// mirrorNamespace sets up a provider, target and ConfigMap rule in ns of cp.
func mirrorNamespace(t *testing.T, cp *testenv.ControlPlane, r *repo, ns string) {
	t.Helper()
	ctx := ctxOf(t)
	if err := cp.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		secretWith(ns, "auth", map[string]string{"username": "bot", "password": "s3cret-pass"}),
		&v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "origin"}, Spec: v1.GitProviderSpec{
			URL: r.url(), SecretRef: &v1.LocalObjectReference{Name: "auth"}, AllowedBranches: []string{"main"},
			Push: v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 500 * time.Millisecond}}}},
		target(ns, "live", "origin", "live", v1.PruneOnEvent),
		watchRule(ns, "cms", "live", configMapsRule()),
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}}},
	} {
		if err := cp.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// Ready alone can come before the rule is compiled (zero streams, nothing watched yet):
	// a change made then would only reach Git through the stream's first snapshot.
	gt := &v1.GitTarget{}
	waitFor(t, "the GitTarget to be ready and watching", func() bool {
		if cp.Client.Get(ctx, keyOf(ns, "live"), gt) != nil || !isTrue(gt.Status.Conditions, v1.ConditionReady) {
			return false
		}
		streams := meta.FindStatusCondition(gt.Status.Conditions, v1.ConditionStreamsRunning)
		return streams != nil && strings.Contains(streams.Message, "watching")
	})
}

func userClient(t *testing.T, cp *testenv.ControlPlane, name string) client.Client {
	t.Helper()
	cfg, err := cp.AddUser(name, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	return clientFor(t, cfg)
}

func clientFor(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEveryCommitIsAuthoredByWhoMadeTheChangeWithItsAuditTrailer(t *testing.T) {
	own, r, metricsAddr := audited(t)
	ns := "attributed"
	mirrorNamespace(t, own, r, ns)
	alice, bob, carol := userClient(t, own, "alice"), userClient(t, own, "bob"), userClient(t, own, "carol")
	saCfg := rest.CopyConfig(own.Config)
	saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":deployer"}
	deployer := clientFor(t, saCfg)
	ctx := ctxOf(t)
	path := "live/" + ns + "/core/configmaps/"

	cm := configMap(ns, "shared", map[string]string{"v": "1"})
	if err := alice.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alice's create", func() bool { return r.has(path + "shared.yaml") })
	cm.Data["v"] = "2"
	if err := bob.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob's edit", func() bool { return strings.Contains(r.file(path+"shared.yaml"), `v: "2"`) })
	if err := deployer.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the service account's delete", func() bool { return !r.has(path + "shared.yaml") })

	log := r.log()
	wantAuthors := []string{"system:serviceaccount:" + ns + ":deployer", "bob", "alice"}
	for i, want := range wantAuthors {
		if !strings.HasPrefix(log[i].Author, want+" <") {
			t.Fatalf("commit %d is authored %q, want %s (subjects %q)", i, log[i].Author, want, subjects(log[:3]))
		}
		if trailers := commitTrailers(t, r, log[i].SHA); !strings.Contains(trailers, "Audit-ID: ") || !strings.Contains(trailers, "Kubernetes-User: "+want) {
			t.Fatalf("commit %d lacks its audit trailers: %q", i, trailers)
		}
	}

	// carol deletes 50 ConfigMaps at once: every delete is hers.
	for i := range 50 {
		if err := alice.Create(ctx, configMap(ns, fmt.Sprintf("bulk-%02d", i), map[string]string{"v": "1"})); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the 50 ConfigMaps", func() bool { return r.has(path+"bulk-49.yaml") && r.has(path+"bulk-00.yaml") })
	before := len(r.log())
	if err := carol.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every delete", func() bool {
		for _, f := range r.files() {
			if strings.Contains(f, "/bulk-") {
				return false
			}
		}
		return true
	})
	log = r.log()
	for _, c := range log[:len(log)-before] {
		if !strings.HasPrefix(c.Author, "carol <") {
			t.Fatalf("a delete of carol's deletecollection is authored %q", c.Author)
		}
	}
	body := get(t, "http://"+metricsAddr+"/metrics")
	for _, series := range []string{`gitops_reverser_audit_events_total{outcome="accepted",reason=""}`, `gitops_reverser_attribution_resolved_total{tier="exact"}`} {
		if metricValue(body, series) < 1 {
			t.Errorf("metric %s is not counted", series)
		}
	}
}

func TestAnUnreachableWebhookStillLandsCommitsAuthoredUnknown(t *testing.T) {
	hookAddr, opAddr := testenv.LoopbackAddress(t), testenv.LoopbackAddress(t)
	// kube-apiserver sends to a port nobody serves; the operator listens elsewhere.
	own := auditedControlPlane(t, hookAddr)
	r := newRepo(t)
	startOperatorWith(t, own.Config, t.TempDir(), func(o *operator.Options) {
		o.AuditBindAddress, o.AuditInsecure, o.AttributionGrace = opAddr, true, time.Second
	})
	ns := "unattributed"
	mirrorNamespace(t, own, r, ns)
	if err := own.Client.Create(ctxOf(t), configMap(ns, "lands", map[string]string{"v": "1"})); err != nil {
		t.Fatal(err)
	}
	path := "live/" + ns + "/core/configmaps/lands.yaml"
	waitFor(t, "the change without attribution", func() bool { return r.has(path) })
	if log := r.log(); !strings.HasPrefix(log[0].Author, "unknown (attribution unresolved)") {
		t.Fatalf("commit authored %q", log[0].Author)
	}
}

// auditedControlPlane starts a control plane that sends audit events to addr. When the
// test ends, after the operator stopped and before the control plane stops, a sink takes
// over addr: kube-apiserver delivers its buffered events before it stops, and would wait
// for a webhook that is gone.
func auditedControlPlane(t *testing.T, addr string) *testenv.ControlPlane {
	t.Helper()
	return auditingControlPlane(t, addr, testenv.WebhookKubeconfig("http://"+addr+"/audit-webhook", "", "", ""), nil)
}

// auditingControlPlane starts a control plane whose audit webhook (hook) posts to addr. Once
// the test's operator stopped, a sink answers there (over TLS with sinkTLS when set), so that
// kube-apiserver can flush its audit batches and stop.
func auditingControlPlane(t *testing.T, addr, hook string, sinkTLS *tls.Config) *testenv.ControlPlane {
	t.Helper()
	var sink io.Closer
	t.Cleanup(func() { // runs last
		if sink != nil {
			_ = sink.Close()
		}
	})
	own := testenv.NewControlPlane(t, testenv.WithAuditWebhook(t, hook)...)
	t.Cleanup(func() { // runs before the control plane stops
		sink, _ = servers.StartAuditSink(addr, sinkTLS)
	})
	return own
}

func isTrue(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func commitTrailers(t *testing.T, r *repo, sha string) string {
	t.Helper()
	out, err := servers.GitOutput(servers.GitCommand("", nil, "--git-dir", r.server.Root()+"/"+r.name, "log", "-1", "--format=%(trailers:only,unfold)", sha))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
