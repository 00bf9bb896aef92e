//go:build e2e

package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// With attribution on but no audit event in time, the commit a CommitRequest saves is
// authored "unknown": AuthorAttributed must say so, not claim a Kubernetes author.
func TestACommitRequestOfAnUnattributedChangeReportsItsAuthorUnresolved(t *testing.T) {
	hookAddr, opAddr := testenv.LoopbackAddress(t), testenv.LoopbackAddress(t)
	own := auditedControlPlane(t, hookAddr) // kube-apiserver posts to a port nobody serves
	r := newRepo(t)
	startOperatorWith(t, own.Config, t.TempDir(), func(o *operator.Options) {
		o.AuditBindAddress, o.AuditInsecure, o.AttributionGrace = opAddr, true, time.Second
	})
	ns := "unresolved-author"
	mirrorNamespace(t, own, r, ns)
	ctx := ctxOf(t)
	// Only the request closes the window from now on.
	p := &v1.GitProvider{}
	if err := own.Client.Get(ctx, keyOf(ns, "origin"), p); err != nil {
		t.Fatal(err)
	}
	p.Spec.Push.CommitWindow = &metav1.Duration{Duration: time.Hour}
	if err := own.Client.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	gt := &v1.GitTarget{}
	waitFor(t, "the target to run with the hour-long window", func() bool {
		return own.Client.Get(ctx, keyOf(ns, "live"), gt) == nil && isTrue(gt.Status.Conditions, v1.ConditionReady)
	})

	// The change waits up to the attribution grace for its author before it reaches the
	// window; a request that overtakes it finds nothing pending, and the next one asks again.
	// The window's update reaches the worker some time after Ready: a change the old
	// half-second window committed on its own is replaced by a newer one.
	cm := configMap(ns, "change", map[string]string{"v": "0"})
	if err := own.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	path := "live/" + ns + "/core/configmaps/change.yaml"
	end := time.Now().Add(deadline)
	for i := 0; ; i++ {
		if strings.Contains(r.file(path), fmt.Sprintf("v: %q", cm.Data["v"])) {
			cm.Data["v"] = fmt.Sprint(i + 1)
			if err := own.Client.Update(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		req := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("save-%d", i)},
			Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "live"}, Message: "save"}}
		if err := own.Client.Create(ctx, req); err != nil {
			t.Fatal(err)
		}
		var pushed *metav1.Condition
		waitFor(t, "the request to be answered", func() bool {
			if own.Client.Get(ctx, keyOf(ns, req.Name), req) != nil {
				return false
			}
			pushed = meta.FindStatusCondition(req.Status.Conditions, v1.ConditionPushed)
			return pushed != nil && pushed.Status == metav1.ConditionTrue
		})
		if pushed.Reason == controller.ReasonNothingPending && time.Now().Before(end) {
			continue
		}
		author := meta.FindStatusCondition(req.Status.Conditions, v1.ConditionAuthorAttributed)
		if pushed.Reason != controller.ReasonPushed || author == nil || author.Status != metav1.ConditionFalse || author.Reason != controller.ReasonAuthorUnresolved {
			t.Fatalf("Pushed %+v, AuthorAttributed %+v; want Pushed and AuthorUnresolved", pushed, author)
		}
		return
	}
}
