package worker

import "testing"

// The applier that owns an object is read from the marks Flux and Argo CD set on what they
// apply, and a target counts only its own applier's marks as its own.
func TestTheApplierOfAnObjectIsReadFromItsMarks(t *testing.T) {
	flux := map[string]string{fluxNameLabel: "apps", fluxNamespaceLabel: "flux-system"}
	for _, c := range []struct {
		name     string
		labels   map[string]string
		tracking string
		want     string
	}{
		{"none", nil, "", ""},
		{"a Kustomization's labels", flux, "", "FluxTrigger flux-system/apps"},
		{"half of Flux's labels", map[string]string{fluxNameLabel: "apps"}, "", ""},
		{"an Application outside Argo CD's namespace", nil, "team_apps:/ConfigMap:team/x", "ArgoCDTrigger team/apps"},
		{"an Application in Argo CD's namespace", nil, "apps:apps/Deployment:team/x", "ArgoCDTrigger apps"},
		{"a malformed tracking id", nil, "no-colon", ""},
		{"an empty instance", nil, ":/ConfigMap:team/x", ""},
		{"two parts only", nil, "apps:x", ""},
		{"a cluster-scoped object", nil, "apps:rbac.authorization.k8s.io/ClusterRole:/reader", "ArgoCDTrigger apps"},
	} {
		if got := ApplierOf(c.labels, c.tracking); got != c.want {
			t.Errorf("%s: ApplierOf = %q, want %q", c.name, got, c.want)
		}
	}

	argo := &targetState{cfg: TargetConfig{Apply: &ApplyTrigger{Kind: "ArgoCDTrigger", Namespace: "argocd", Name: "apps"}}}
	fluxTarget := &targetState{cfg: TargetConfig{Apply: &ApplyTrigger{Kind: "FluxTrigger", Namespace: "flux-system", Name: "apps"}}}
	for _, c := range []struct {
		name    string
		ts      *targetState
		applier string
		want    bool
	}{
		{"its own Application, qualified", argo, "ArgoCDTrigger argocd/apps", false},
		{"its own Application, bare", argo, "ArgoCDTrigger apps", false},
		{"another Application", argo, "ArgoCDTrigger argocd/other", true},
		{"a Kustomization of the same name", argo, "FluxTrigger argocd/apps", true},
		{"an Application of the same name, for a Flux target", fluxTarget, "ArgoCDTrigger apps", true},
		{"its own Kustomization", fluxTarget, "FluxTrigger flux-system/apps", false},
		{"nobody's", argo, "", false},
	} {
		if got := c.ts.ownedElsewhere(c.applier); got != c.want {
			t.Errorf("%s: ownedElsewhere(%q) = %v, want %v", c.name, c.applier, got, c.want)
		}
	}
}
