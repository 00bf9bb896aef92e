package sandbox

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestMirrorManifestDecodesIntoTheThreeKinds(t *testing.T) {
	objs, err := decodeMirror(MirrorManifest("http://127.0.0.1:1234/sandbox.git"))
	if err != nil {
		t.Fatal(err)
	}
	provider, target, rule := objs[0].(*v1.GitProvider), objs[1].(*v1.GitTarget), objs[2].(*v1.WatchRule)
	if provider.Spec.URL != "http://127.0.0.1:1234/sandbox.git" || provider.Spec.SecretRef.Name != "git-creds" ||
		provider.Spec.Push.CommitWindow.Duration != time.Second || provider.Spec.AllowedBranches[0] != Branch {
		t.Errorf("GitProvider spec = %+v", provider.Spec)
	}
	if target.Spec.GitProviderRef.Name != TargetName || target.Spec.Branch != Branch || target.Spec.Path != TargetPath {
		t.Errorf("GitTarget spec = %+v", target.Spec)
	}
	if rule.Spec.TargetRef.Name != TargetName || strings.Join(rule.Spec.Rules[0].Resources, ",") != "configmaps,deployments" {
		t.Errorf("WatchRule spec = %+v", rule.Spec)
	}
	for _, o := range objs {
		if o.GetNamespace() != Namespace || o.GetName() != TargetName {
			t.Errorf("%T is %s/%s, want %s/%s", o, o.GetNamespace(), o.GetName(), Namespace, TargetName)
		}
	}
}

func TestDocumentPathFollowsTheCanonicalLayout(t *testing.T) {
	if got := DocumentPath("", "configmaps", "app-config"); got != "clusters/sandbox/demo/core/configmaps/app-config.yaml" {
		t.Errorf("core group: %s", got)
	}
	if got := DocumentPath("apps", "deployments", "web"); got != "clusters/sandbox/demo/apps/deployments/web.yaml" {
		t.Errorf("apps group: %s", got)
	}
}
