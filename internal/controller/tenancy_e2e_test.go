//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/secrets"
)

// The case of docs/tenancy.md: a namespace tenant who may not read Secrets writes a
// WatchRule for configmaps and secrets, with a GitTarget encrypting to the tenant's own
// age key. Under lockdown (--default-service-account) the rule has the rights of the
// namespace's "mirror" service account: ConfigMaps are mirrored, the Secret is not, and
// the rule says Forbidden naming secrets. Once the account may read Secrets, they follow.
func TestALockedDownTenantGetsOnlyWhatItsServiceAccountMayRead(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperatorWith(t, cp.Config, t.TempDir(), func(o *operator.Options) { o.DefaultServiceAccount = "mirror" })
	_, recipient, err := secrets.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mirror"}})
	grant(t, ns, "mirror-reads", rbacv1.Subject{Kind: "ServiceAccount", Name: "mirror", Namespace: ns}, "configmaps")
	tenantName := "tenant-" + ns
	tenantCfg, err := cp.AddUser(tenantName)
	if err != nil {
		t.Fatal(err)
	}
	tenant := clientFor(t, tenantCfg)
	grantTenant(t, ns, tenantName)
	providerWithSecret(t, ns, "origin", r) // the platform team's credentials
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, StringData: map[string]string{"password": "hunter2"}})
	create(t, configMap(ns, "app", map[string]string{"k": "v"}))
	if err := tenant.Get(ctxOf(t), keyOf(ns, "db"), &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the tenant reads the Secret itself (%v): the test proves nothing", err)
	}

	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	gt.Spec.Encryption = &v1.EncryptionSpec{Provider: "sops", Age: v1.AgeSpec{Recipients: []string{recipient}}}
	rule := watchRule(ns, "both", "live", v1.ResourceRule{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}})
	if err := tenant.Create(ctxOf(t), gt); err != nil {
		t.Fatalf("the tenant creates its GitTarget: %v", err)
	}
	if err := tenant.Create(ctxOf(t), rule); err != nil {
		t.Fatalf("the tenant creates its WatchRule: %v", err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(ctxOf(t), rule); _ = cp.Client.Delete(ctxOf(t), gt) })

	prefix := "live/" + ns + "/core/"
	waitFor(t, "the tenant's ConfigMap in Git", func() bool { return r.has(prefix + "configmaps/app.yaml") })
	cond := waitCondition(t, rule, func() []metav1.Condition { return rule.Status.Conditions }, v1.ConditionAuthorized, metav1.ConditionFalse, controller.ReasonForbidden)
	if !strings.Contains(cond.Message, `"mirror"`) || !strings.Contains(cond.Message, "secrets") {
		t.Fatalf("the Forbidden condition does not name the account and the resource: %q", cond.Message)
	}
	waitCondition(t, rule, func() []metav1.Condition { return rule.Status.Conditions }, v1.ConditionReady, metav1.ConditionFalse, controller.ReasonForbidden)
	// A later ConfigMap lands; by then a Secret stream would have delivered long ago.
	create(t, configMap(ns, "later", map[string]string{"k": "v"}))
	waitFor(t, "a later ConfigMap in Git", func() bool { return r.has(prefix + "configmaps/later.yaml") })
	for _, f := range r.files() {
		if strings.Contains(f, "/secrets/") {
			t.Fatalf("a Secret the rule's service account may not read is in Git: %s", f)
		}
	}

	// The namespace's admin lets the account read Secrets: the rule's Secrets follow.
	grant(t, ns, "mirror-reads-secrets", rbacv1.Subject{Kind: "ServiceAccount", Name: "mirror", Namespace: ns}, "secrets")
	waitFor(t, "the Secret, sealed, once the account may read it", func() bool { return r.has(prefix + "secrets/db.sops.yaml") })
	waitCondition(t, rule, func() []metav1.Condition { return rule.Status.Conditions }, v1.ConditionAuthorized, metav1.ConditionTrue, "")
}

// Lockdown binds namespace tenants, not the cluster admin: a ClusterWatchRule (cluster-scoped,
// so made by an admin) keeps the operator's own rights, even in a namespace whose default
// service account does not exist (docs/tenancy.md).
func TestAClusterWatchRuleKeepsTheOperatorsRightsUnderLockdown(t *testing.T) {
	selected := map[string]string{"gitops-reverser.io/test": "cluster-rule-under-lockdown"}
	ns := newNamespace(t, selected)
	r := newRepo(t)
	startOperatorWith(t, cp.Config, t.TempDir(), func(o *operator.Options) { o.DefaultServiceAccount = "mirror" })
	providerWithSecret(t, ns, "origin", r)
	create(t, configMap(ns, "app", map[string]string{"k": "v"}))
	create(t, target(ns, "live", "origin", "live", v1.PruneOnEvent))
	rule := &v1.ClusterWatchRule{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: v1.ClusterWatchRuleSpec{
		TargetRef: v1.NamespacedObjectReference{Namespace: ns, Name: "live"},
		Rules: []v1.ClusterResourceRule{{ResourceRule: configMapsRule(),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: selected}}},
	}}
	create(t, rule)

	waitFor(t, "the ConfigMap in Git through the ClusterWatchRule", func() bool { return r.has("live/" + ns + "/core/configmaps/app.yaml") })
	waitCondition(t, rule, func() []metav1.Condition { return rule.Status.Conditions }, v1.ConditionReady, metav1.ConditionTrue, "")
}

// grant gives subject get, list and watch on the core resources of namespace ns.
func grant(t *testing.T, ns, name string, subject rbacv1.Subject, resources ...string) {
	t.Helper()
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "list", "watch"}}}})
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{subject}})
}

// grantTenant lets user manage the operator's kinds and ConfigMaps of ns, and nothing else.
func grantTenant(t *testing.T, ns, user string) {
	t.Helper()
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"gitops-reverser.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
		}})
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "tenant"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user, APIGroup: "rbac.authorization.k8s.io"}}})
}
