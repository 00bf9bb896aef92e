package controller

import (
	"context"
	"testing"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
)

// A GitProvider whose credentials would cross the network in clear text, or whose URL
// reaches the operator's own files, is not Validated, with a reason that says why and what
// to do — before any connection is made.
func TestAnInsecureTransportIsReportedOnTheGitProvider(t *testing.T) {
	r := &GitProviderReconciler{ProbeDir: t.TempDir()}
	for _, c := range []struct {
		url   string
		creds gitrepo.Credentials
	}{
		{"http://git.example.com/team/app.git", gitrepo.Credentials{Username: "bot", Password: "pw"}},
		{"file:///var/lib/gitops-reverser/branches/other", gitrepo.Credentials{}},
	} {
		p := &v1.GitProvider{Spec: v1.GitProviderSpec{URL: c.url, AllowedBranches: []string{"main"}}}
		prob := r.probeRemote(context.Background(), p, c.creds)
		if prob == nil || prob.reason != ReasonInsecureTransport || prob.condition != v1.ConditionValidated || !prob.stalled {
			t.Errorf("%s: problem %+v, want Validated=False, InsecureTransport", c.url, prob)
		}
	}
}
