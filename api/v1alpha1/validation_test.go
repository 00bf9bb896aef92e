//go:build e2e

package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// The API server itself refuses bad specs: these tests run against a real kube-apiserver
// with the generated CRDs installed.

var cp *testenv.ControlPlane

func TestMain(m *testing.M) {
	var err error
	cp, err = testenv.StartControlPlane()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = cp.Stop()
	os.Exit(code)
}

const ns = "default"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// expectRefused asserts that the API server refused err as invalid, with a message that
// contains want.
func expectRefused(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted a spec it should refuse (want a message containing %q)", want)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error, got %v", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal message %q does not contain %q", err.Error(), want)
	}
}

func provider(name string, mutate func(*v1.GitProvider)) *v1.GitProvider {
	p := &v1.GitProvider{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.GitProviderSpec{
			URL:             "https://git.example.com/team/app.git",
			SecretRef:       &v1.LocalObjectReference{Name: "git-creds"},
			AllowedBranches: []string{"main", "release-*"},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func target(name string, mutate func(*v1.GitTarget)) *v1.GitTarget {
	gt := &v1.GitTarget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.GitTargetSpec{
			GitProviderRef: v1.GitProviderReference{Name: "repo"},
			Branch:         "main",
			Path:           "clusters/dev",
		},
	}
	if mutate != nil {
		mutate(gt)
	}
	return gt
}

func TestGitProviderAcceptsGoodSpecAndDefaultsCommitWindow(t *testing.T) {
	p := provider("good-provider", func(p *v1.GitProvider) {
		p.Spec.AccessFrom = &v1.NamespaceMatcher{Namespaces: []string{"team-a"}}
		p.Spec.Commit.Committer = &v1.Identity{Name: "Bot", Email: "bot@example.com"}
	})
	if err := cp.Client.Create(ctx(t), p); err != nil {
		t.Fatalf("a good GitProvider was refused: %v", err)
	}
	got := &v1.GitProvider{}
	if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Push.CommitWindow == nil || got.Spec.Push.CommitWindow.Duration != 5*time.Second {
		t.Fatalf("commitWindow defaulted to %v, want 5s", got.Spec.Push.CommitWindow)
	}
}

func TestGitProviderAcceptsEveryURLForm(t *testing.T) {
	for i, url := range []string{"https://h/r.git", "http://127.0.0.1:8080/r.git", "ssh://git@h:2222/r.git", "HTTPS://h/r.git", "git@github.com:org/r.git"} {
		p := provider(fmt.Sprintf("url-form-%d", i), func(p *v1.GitProvider) { p.Spec.URL = url })
		if err := cp.Client.Create(ctx(t), p); err != nil {
			t.Errorf("url %q refused: %v", url, err)
		}
	}
}

// A file:// URL would reach the operator's own files, other targets' local copies
// included: the API server refuses it.
func TestGitProviderRefusesFileURLs(t *testing.T) {
	for i, url := range []string{"file:///srv/r.git", "FILE:///tmp/gitops-reverser/branches/x"} {
		err := cp.Client.Create(ctx(t), provider(fmt.Sprintf("file-url-%d", i), func(p *v1.GitProvider) { p.Spec.URL = url }))
		expectRefused(t, err, "file:// is not supported")
	}
}

// A branch name that git check-ref-format refuses (it would be pasted into a refspec) is
// refused by the API server; ordinary names with slashes pass.
func TestGitTargetRefusesInvalidBranchNames(t *testing.T) {
	for i, branch := range []string{"main:refs/heads/other", "a..b", "-x y", "feature/", "/main", "main.", "a//b", ".hidden", "a/.b", "x.lock", "a@{1}", "@", "wild*", "back\\slash", "tab\tname", "HEAD", "-x", "refs/heads/main"} {
		gt := target(fmt.Sprintf("bad-branch-%d", i), func(g *v1.GitTarget) { g.Spec.Branch = branch })
		expectRefused(t, cp.Client.Create(ctx(t), gt), "spec.branch must be a valid Git branch name")
	}
	for i, branch := range []string{"main", "release/1.2", "feature/x-y_z", "v1.0.0"} {
		gt := target(fmt.Sprintf("good-branch-%d", i), func(g *v1.GitTarget) { g.Spec.Branch = branch })
		if err := cp.Client.Create(ctx(t), gt); err != nil {
			t.Errorf("branch %q refused: %v", branch, err)
		}
	}
}

func TestGitProviderRefusesMalformedURL(t *testing.T) {
	err := cp.Client.Create(ctx(t), provider("bad-url", func(p *v1.GitProvider) { p.Spec.URL = "not a url" }))
	expectRefused(t, err, "spec.url must be an https://")
}

func TestGitProviderURLIsImmutable(t *testing.T) {
	p := provider("immutable-url", nil)
	if err := cp.Client.Create(ctx(t), p); err != nil {
		t.Fatal(err)
	}
	p.Spec.URL = "https://git.example.com/team/other.git"
	expectRefused(t, cp.Client.Update(ctx(t), p), "spec.url is immutable")
}

func TestGitProviderRefusesNegativeCommitWindow(t *testing.T) {
	err := cp.Client.Create(ctx(t), provider("negative-window", func(p *v1.GitProvider) {
		p.Spec.Push.CommitWindow = &metav1.Duration{Duration: -time.Second}
	}))
	expectRefused(t, err, "commitWindow must be a non-negative duration")
}

func TestGitProviderAcceptsZeroCommitWindow(t *testing.T) {
	err := cp.Client.Create(ctx(t), provider("zero-window", func(p *v1.GitProvider) {
		p.Spec.Push.CommitWindow = &metav1.Duration{}
	}))
	if err != nil {
		t.Fatalf("commitWindow 0s refused: %v", err)
	}
}

func TestGitProviderRefusesEmptyAllowedBranches(t *testing.T) {
	err := cp.Client.Create(ctx(t), provider("no-branches", func(p *v1.GitProvider) { p.Spec.AllowedBranches = nil }))
	expectRefused(t, err, "allowedBranches")
}

func TestGitTargetAcceptsGoodSpec(t *testing.T) {
	gt := target("good-target", func(gt *v1.GitTarget) {
		gt.Spec.GitProviderRef.Namespace = "platform"
		gt.Spec.Prune.Mode = v1.PruneAlways
		gt.Spec.Encryption = &v1.EncryptionSpec{Provider: "sops", Age: v1.AgeSpec{
			Recipients: []string{"age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"}}}
		gt.Spec.Placement = &v1.PlacementSpec{Default: "{namespace}/{kind}-{name}.yaml"}
	})
	if err := cp.Client.Create(ctx(t), gt); err != nil {
		t.Fatalf("a good GitTarget was refused: %v", err)
	}
	root := target("root-target", func(gt *v1.GitTarget) { gt.Spec.Path = "." })
	if err := cp.Client.Create(ctx(t), root); err != nil {
		t.Fatalf("path '.' (the repository root) was refused: %v", err)
	}
	if root.Spec.Prune.Mode != v1.PruneOnEvent {
		t.Fatalf("prune mode defaulted to %q, want OnEvent", root.Spec.Prune.Mode)
	}
}

func TestGitTargetRefusesAbsolutePath(t *testing.T) {
	err := cp.Client.Create(ctx(t), target("absolute-path", func(gt *v1.GitTarget) { gt.Spec.Path = "/clusters/dev" }))
	expectRefused(t, err, "remove the leading '/'")
}

func TestGitTargetRefusesDotDotSegment(t *testing.T) {
	for i, path := range []string{"..", "../x", "a/../b", "a/.."} {
		err := cp.Client.Create(ctx(t), target(fmt.Sprintf("dotdot-%d", i), func(gt *v1.GitTarget) { gt.Spec.Path = path }))
		expectRefused(t, err, "must not contain a '..' segment")
	}
	ok := target("dotdot-in-name", func(gt *v1.GitTarget) { gt.Spec.Path = "a/..b/c.." })
	if err := cp.Client.Create(ctx(t), ok); err != nil {
		t.Fatalf("a path whose names merely contain dots was refused: %v", err)
	}
}

func TestGitTargetBranchAndPathAreImmutable(t *testing.T) {
	gt := target("immutable-target", nil)
	if err := cp.Client.Create(ctx(t), gt); err != nil {
		t.Fatal(err)
	}
	changedBranch := gt.DeepCopy()
	changedBranch.Spec.Branch = "release-1"
	expectRefused(t, cp.Client.Update(ctx(t), changedBranch), "spec.branch is immutable")

	changedPath := gt.DeepCopy()
	changedPath.Spec.Path = "clusters/prod"
	expectRefused(t, cp.Client.Update(ctx(t), changedPath), "spec.path is immutable")

	changedPrune := gt.DeepCopy()
	changedPrune.Spec.Prune.Mode = v1.PruneNever
	if err := cp.Client.Update(ctx(t), changedPrune); err != nil {
		t.Fatalf("prune mode is meant to be mutable, but the update was refused: %v", err)
	}
}

func TestGitTargetRefusesUnknownPruneMode(t *testing.T) {
	err := cp.Client.Create(ctx(t), target("bad-prune", func(gt *v1.GitTarget) { gt.Spec.Prune.Mode = "Sometimes" }))
	expectRefused(t, err, "spec.prune.mode")
}

func watchRule(name string, resources ...string) *v1.WatchRule {
	return &v1.WatchRule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.WatchRuleSpec{
			TargetRef: v1.LocalObjectReference{Name: "good-target"},
			Rules:     []v1.ResourceRule{{APIGroups: []string{"", "apps"}, Resources: resources, Operations: []v1.Operation{"*"}}},
		},
	}
}

func TestWatchRuleAcceptsGoodSpec(t *testing.T) {
	if err := cp.Client.Create(ctx(t), watchRule("good-rule", "configmaps", "deployments")); err != nil {
		t.Fatalf("a good WatchRule was refused: %v", err)
	}
}

func TestWatchRuleRefusesSubresource(t *testing.T) {
	expectRefused(t, cp.Client.Create(ctx(t), watchRule("scale-rule", "deployments/scale")), "may not name subresources")
}

func TestWatchRuleRefusesEmptyRules(t *testing.T) {
	r := watchRule("empty-rule", "configmaps")
	r.Spec.Rules = nil
	expectRefused(t, cp.Client.Create(ctx(t), r), "spec.rules")
}

func clusterRule(name string, resources ...string) *v1.ClusterWatchRule {
	return &v1.ClusterWatchRule{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.ClusterWatchRuleSpec{
			TargetRef: v1.NamespacedObjectReference{Name: "good-target", Namespace: ns},
			Rules: []v1.ClusterResourceRule{{
				ResourceRule:      v1.ResourceRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: resources},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"mirror": "yes"}},
			}},
		},
	}
}

func TestClusterWatchRuleAcceptsGoodSpec(t *testing.T) {
	if err := cp.Client.Create(ctx(t), clusterRule("good-cluster-rule", "clusterroles")); err != nil {
		t.Fatalf("a good ClusterWatchRule was refused: %v", err)
	}
}

func TestClusterWatchRuleRefusesSubresource(t *testing.T) {
	expectRefused(t, cp.Client.Create(ctx(t), clusterRule("status-rule", "clusterroles/status")), "may not name subresources")
}

func TestCommitRequestSpecIsImmutable(t *testing.T) {
	cr := &v1.CommitRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "save", Namespace: ns},
		Spec:       v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "good-target"}, Message: "release 1.2"},
	}
	if err := cp.Client.Create(ctx(t), cr); err != nil {
		t.Fatalf("a good CommitRequest was refused: %v", err)
	}
	cr.Spec.Message = "something else"
	expectRefused(t, cp.Client.Update(ctx(t), cr), "CommitRequest spec is immutable")
}

func TestCommitRequestRefusesEmptyMessage(t *testing.T) {
	cr := &v1.CommitRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "empty-message", Namespace: ns},
		Spec:       v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "good-target"}},
	}
	expectRefused(t, cp.Client.Create(ctx(t), cr), "spec.message")
}

func TestGitTargetReapplyOnRefusalNeedsAnApplyTrigger(t *testing.T) {
	err := cp.Client.Create(ctx(t), target("reapply-alone", func(gt *v1.GitTarget) { gt.Spec.OnRefusal = v1.RefusalReapply }))
	expectRefused(t, err, "onRefusal: Reapply needs spec.applyTriggerRef")
	ok := target("reapply-with-trigger", func(gt *v1.GitTarget) {
		gt.Spec.OnRefusal = v1.RefusalReapply
		gt.Spec.ApplyTriggerRef = &v1.ApplyTriggerReference{Kind: "FluxTrigger", Name: "apps"}
	})
	if err := cp.Client.Create(ctx(t), ok); err != nil {
		t.Fatalf("Reapply with an applyTriggerRef was refused: %v", err)
	}
	plain := target("refusal-default", nil)
	if err := cp.Client.Create(ctx(t), plain); err != nil {
		t.Fatal(err)
	}
	if plain.Spec.OnRefusal != v1.RefusalIgnore {
		t.Fatalf("onRefusal defaulted to %q, want Ignore", plain.Spec.OnRefusal)
	}
	err = cp.Client.Create(ctx(t), target("unknown-trigger-kind", func(gt *v1.GitTarget) {
		gt.Spec.ApplyTriggerRef = &v1.ApplyTriggerReference{Kind: "Jenkins", Name: "x"}
	}))
	expectRefused(t, err, "spec.applyTriggerRef.kind")
}

func TestGitTargetWriteDefaultsIsOmitOrKeep(t *testing.T) {
	plain := target("defaults-default", nil)
	if err := cp.Client.Create(ctx(t), plain); err != nil {
		t.Fatal(err)
	}
	if plain.Spec.Write.Defaults != v1.DefaultsOmit {
		t.Fatalf("write.defaults defaulted to %q, want Omit", plain.Spec.Write.Defaults)
	}
	if err := cp.Client.Create(ctx(t), target("defaults-keep", func(gt *v1.GitTarget) { gt.Spec.Write.Defaults = v1.DefaultsKeep })); err != nil {
		t.Fatalf("write.defaults: Keep was refused: %v", err)
	}
	err := cp.Client.Create(ctx(t), target("defaults-sometimes", func(gt *v1.GitTarget) { gt.Spec.Write.Defaults = "Sometimes" }))
	expectRefused(t, err, "spec.write.defaults")
}

func TestFluxTriggerNeedsAKustomizationName(t *testing.T) {
	ft := &v1.FluxTrigger{ObjectMeta: metav1.ObjectMeta{Name: "no-name", Namespace: ns}}
	expectRefused(t, cp.Client.Create(ctx(t), ft), "spec.kustomizationRef.name")
	ft = &v1.FluxTrigger{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: v1.FluxTriggerSpec{KustomizationRef: v1.KustomizationReference{Name: "apps", Namespace: "flux-system"}}}
	if err := cp.Client.Create(ctx(t), ft); err != nil {
		t.Fatalf("a good FluxTrigger was refused: %v", err)
	}
}

func TestArgoCDTriggerNeedsAnApplicationName(t *testing.T) {
	at := &v1.ArgoCDTrigger{ObjectMeta: metav1.ObjectMeta{Name: "no-name", Namespace: ns}}
	expectRefused(t, cp.Client.Create(ctx(t), at), "spec.applicationRef.name")
	at = &v1.ArgoCDTrigger{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: v1.ArgoCDTriggerSpec{ApplicationRef: v1.ApplicationReference{Name: "apps", Namespace: "argocd"}}}
	if err := cp.Client.Create(ctx(t), at); err != nil {
		t.Fatalf("a good ArgoCDTrigger was refused: %v", err)
	}
	gt := target("argocd-triggered", func(gt *v1.GitTarget) {
		gt.Spec.ApplyTriggerRef = &v1.ApplyTriggerReference{Kind: "ArgoCDTrigger", Name: "apps"}
	})
	if err := cp.Client.Create(ctx(t), gt); err != nil {
		t.Fatalf("a GitTarget naming an ArgoCDTrigger was refused: %v", err)
	}
}
