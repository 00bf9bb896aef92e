//go:build e2e

package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
)

func TestCommitRequestClosesTheOpenWindowWithItsMessage(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	// A window that would stay open for an hour: only the request closes it.
	providerWithSecret(t, ns, "origin", r, func(p *v1.GitProvider) {
		p.Spec.Push.CommitWindow = &metav1.Duration{Duration: time.Hour}
	})
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "cms", "live", configMapsRule()))
	targetReady(t, gt)
	create(t, configMap(ns, "release-notes", map[string]string{"version": "1.2.0"}))
	path := "live/" + ns + "/core/configmaps/release-notes.yaml"

	req := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release"},
		Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "live"}, Message: "Release 1.2.0"}}
	// The request may arrive before the event reached the window; then it reports
	// NothingPending and a second request saves the window.
	create(t, req)
	cond := waitCondition(t, req, func() []metav1.Condition { return req.Status.Conditions }, v1.ConditionPushed, metav1.ConditionTrue, "")
	if cond.Reason == controller.ReasonNothingPending {
		req2 := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release-again"}, Spec: req.Spec}
		create(t, req2)
		cond = waitCondition(t, req2, func() []metav1.Condition { return req2.Status.Conditions }, v1.ConditionPushed, metav1.ConditionTrue, "")
		req = req2
	}
	if cond.Reason != controller.ReasonPushed {
		t.Fatalf("Pushed reason %s: %s", cond.Reason, cond.Message)
	}
	tip, err := r.server.BranchTip(r.name, "main")
	if err != nil {
		t.Fatal(err)
	}
	if req.Status.SHA != tip || req.Status.Branch != "main" {
		t.Fatalf("status sha %s on %q, remote tip %s", req.Status.SHA, req.Status.Branch, tip)
	}
	if log := r.log(); log[0].Subject != "Release 1.2.0" {
		t.Fatalf("the commit's subject is %q", log[0].Subject)
	}
	if !strings.Contains(r.file(path), "version: 1.2.0") {
		t.Fatal("the saved window's document is not on the remote")
	}

	// Nothing is waiting now: the answer says so and names the tip.
	idle := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nothing"}, Spec: req.Spec}
	create(t, idle)
	cond = waitCondition(t, idle, func() []metav1.Condition { return idle.Status.Conditions }, v1.ConditionPushed, metav1.ConditionTrue, controller.ReasonNothingPending)
	if idle.Status.SHA != tip {
		t.Fatalf("an idle request reports sha %s, want the tip %s", idle.Status.SHA, tip)
	}
}
