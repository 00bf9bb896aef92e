//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// peakRSSLimit is the chart's memory limit: the operator must meet hostile content within it.
const peakRSSLimit = 512 << 20

// Hostile files pushed into two target folders of a branch — a kustomization listing a
// nested-alias "billion laughs" file, and a 40 MiB file — refuse those folders by name, while
// the built operator stays up within the chart's memory limit and the third target of the
// same branch keeps mirroring (docs/security.md#bounded-reading).
func TestHostileRepositoryContentRefusesItsFolderAndNothingElse(t *testing.T) {
	const (
		wait = 5 * time.Minute
		ns   = "hostile"
	)
	cp := testenv.NewControlPlane(t)
	kubeconfig, err := cp.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	git := testenv.NewGitServer(t)
	if err := git.CreateRepo("x.git"); err != nil {
		t.Fatal(err)
	}
	front := git.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "s3cret-pass"})
	bomb := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n  namespace: hostile\ndata:\n" + testenv.AliasBomb(9, 9, 2)
	if _, err := git.PushForeign("x.git", "main", testenv.ForeignChange{Files: map[string]string{
		"bomb/kustomization.yaml": "resources:\n- laughs.yaml\n",
		"bomb/laughs.yaml":        bomb,
		"big/huge.yaml":           "# " + strings.Repeat("x", 40<<20) + "\n",
	}}); err != nil {
		t.Fatal(err)
	}
	proc := startOperatorProcess(t, buildBinary(t), "hostile", kubeconfig, "default", "hostile-e2e")

	if err := cp.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	create := func(obj client.Object) {
		t.Helper()
		if err := cp.Client.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "origin-auth"},
		StringData: map[string]string{"username": "bot", "password": "s3cret-pass"}})
	create(&v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "origin"}, Spec: v1.GitProviderSpec{
		URL: front.URL("x.git"), SecretRef: &v1.LocalObjectReference{Name: "origin-auth"}, AllowedBranches: []string{"main"},
		Push: v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 200 * time.Millisecond}},
	}})
	for _, name := range []string{"bomb", "big", "fine"} {
		create(&v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.GitTargetSpec{
			GitProviderRef: v1.GitProviderReference{Name: "origin"}, Branch: "main", Path: name,
		}})
		create(&v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.WatchRuleSpec{
			TargetRef: v1.LocalObjectReference{Name: name},
			Rules:     []v1.ResourceRule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}},
		}})
	}
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}, Data: map[string]string{"k": "v"}})

	for _, c := range []struct{ target, file, bound string }{
		{"bomb", "laughs.yaml", "aliases"},
		{"big", "huge.yaml", "size"},
	} {
		var msg string
		waitFor(t, wait, "folder "+c.target+" refused by name", func() bool {
			gt := &v1.GitTarget{}
			if cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.target}, gt) != nil {
				return false
			}
			cond := meta.FindStatusCondition(gt.Status.Conditions, v1.ConditionGitPathAccepted)
			if cond == nil || cond.Status != metav1.ConditionFalse {
				return false
			}
			msg = cond.Message
			return true
		})
		if !strings.Contains(msg, c.file) || !strings.Contains(msg, c.bound) {
			t.Errorf("GitTarget %s: GitPathAccepted message %q, want it to name %s and the %s bound", c.target, msg, c.file, c.bound)
		}
	}
	waitFor(t, wait, "the healthy target's first ConfigMap", func() bool {
		_, err := git.ReadFile("x.git", "main", "fine/hostile/core/configmaps/first.yaml")
		return err == nil
	})
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}, Data: map[string]string{"k": "v"}})
	waitFor(t, wait, "the healthy target's later ConfigMap", func() bool {
		_, err := git.ReadFile("x.git", "main", "fine/hostile/core/configmaps/later.yaml")
		return err == nil
	})

	if !proc.alive() {
		t.Fatalf("the operator exited: %s", strings.Join(proc.tail(20), "\n"))
	}
	peak, err := peakRSS(proc.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak resident memory of the operator: %d MiB", peak>>20)
	if peak >= peakRSSLimit {
		t.Fatalf("peak resident memory %d MiB, want under %d MiB", peak>>20, peakRSSLimit>>20)
	}
}

// peakRSS reads the peak resident set size of a process (VmHWM in /proc/PID/status).
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
