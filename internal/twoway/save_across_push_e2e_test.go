//go:build e2e

package twoway

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// E12: a CommitRequest saved across a Git-side change. The worker does not poll (an hour),
// so it commits the save on the tip it knew; the push is rejected, the save replayed on the
// Git-side commit and pushed. The request resolves with the commit as it is on the remote,
// the Git-side change stays in Git and is applied.
func TestACommitRequestMadeAcrossAGitSideChangeResolvesFromThePush(t *testing.T) {
	eachApplier(t, testACommitRequestMadeAcrossAGitSideChangeResolvesFromThePush)
}

func testACommitRequestMadeAcrossAGitSideChangeResolvesFromThePush(t *testing.T, a gitopsApplier) {
	l := newStoppedLoop(t, a)
	var provider v1.GitProvider
	if err := l.cp.Client.Get(l.ctx(), keyOf(l.ns, "origin"), &provider); err != nil {
		t.Fatal(err)
	}
	provider.Spec.Push.CommitWindow = &metav1.Duration{Duration: time.Hour} // only the request closes it
	if err := l.cp.Client.Update(l.ctx(), &provider); err != nil {
		t.Fatal(err)
	}
	l.startOperator(func(o *operator.Options) {
		tune := o.Tune
		o.Tune = func(c *worker.Config) { tune(c); c.ApplyPoll = time.Hour }
	})
	l.appliesSettled()

	l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "saved"}, Data: map[string]string{"v": "from-api"}})
	waitFor(t, "the create held in the open window", func() bool {
		st, err := l.workerStatus()
		return err == nil && st.Ledger.Open >= 1
	})
	pushed := l.folder + "pushed.yaml"
	foreign, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{pushed: configMapDoc(l.ns, "pushed", "from-git")}})
	if err != nil {
		t.Fatal(err)
	}
	req := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "save"},
		Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: "apps"}, Message: "Save across a push"}}
	l.create(req)
	var cond *metav1.Condition
	waitFor(t, "the request to resolve", func() bool {
		if err := l.cp.Client.Get(l.ctx(), client.ObjectKeyFromObject(req), req); err != nil {
			return false
		}
		cond = meta.FindStatusCondition(req.Status.Conditions, v1.ConditionPushed)
		return cond != nil && cond.Status == metav1.ConditionTrue
	})
	if cond.Reason != controller.ReasonPushed {
		t.Fatalf("Pushed reason %s: %s", cond.Reason, cond.Message)
	}
	log, err := l.git.Log("fleet.git", "main")
	if err != nil {
		t.Fatal(err)
	}
	saved := slices.IndexFunc(log, func(c testenv.Commit) bool { return c.SHA == req.Status.SHA })
	git := slices.IndexFunc(log, func(c testenv.Commit) bool { return c.SHA == foreign })
	if saved < 0 || git < 0 || saved > git || log[saved].Subject != "Save across a push" {
		t.Fatalf("the request names %s; on the remote the save must follow the Git-side commit %s: %+v", req.Status.SHA, foreign, log)
	}
	if l.inGit(l.folder+"saved.yaml") == "" || l.inGit(pushed) == "" {
		t.Fatal("the save or the Git-side change is missing from Git")
	}
	waitFor(t, "the Git-side change on the cluster", func() bool { return l.live("pushed") == "from-git" })
}
