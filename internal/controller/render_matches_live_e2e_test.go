//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// Render fidelity (docs/kustomize.md#render-fidelity) through the operator: a folder whose
// render holds a ${...} token the live object does not (an applier substituted it, as
// Flux's postBuild.substitute does) cannot be mirrored without writing one environment's
// value over the variable. RenderMatchesLive turns False naming the object, field and
// token, and the target's writes are held back. A token the live object holds as well (a
// shell script's ${HOME}) is just text, and writes flow.

const greetingDoc = `apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
  namespace: NS
data:
  message: ${GREETING} # set by the applier per cluster
`

const otherDoc = `apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: NS
data:
  color: blue
`

func TestASubstitutedTokenHoldsAPlainFoldersWrites(t *testing.T) {
	ns := newNamespace(t, nil)
	base := "live/" + ns + "/core/configmaps/"
	pushed := map[string]string{
		"live/README.md":       "# live\n",
		base + "greeting.yaml": strings.ReplaceAll(greetingDoc, "NS", ns),
		base + "other.yaml":    strings.ReplaceAll(otherDoc, "NS", ns),
	}
	substituted := map[string]string{}
	for p, content := range pushed {
		substituted[p] = strings.ReplaceAll(content, "${GREETING}", "hello")
	}
	holdsWrites(t, ns, "live", pushed, func() {
		kzApplyDocs(t, substituted[base+"greeting.yaml"], substituted[base+"other.yaml"])
	})
}

func TestASubstitutedTokenHoldsAKustomizeFoldersWrites(t *testing.T) {
	ns := newNamespace(t, nil)
	const folder = "apps/dev"
	pushed := map[string]string{
		folder + "/README.md":          "# dev\n",
		folder + "/kustomization.yaml": "resources:\n- greeting.yaml\n- other.yaml\nnamespace: " + ns + "\n",
		folder + "/greeting.yaml":      strings.ReplaceAll(greetingDoc, "  namespace: NS\n", ""),
		folder + "/other.yaml":         strings.ReplaceAll(otherDoc, "  namespace: NS\n", ""),
	}
	substituted := map[string]string{}
	for p, content := range pushed {
		substituted[p] = strings.ReplaceAll(content, "${GREETING}", "hello")
	}
	holdsWrites(t, ns, folder, pushed, func() { kzApplyRender(t, substituted, folder) })
}

// holdsWrites pushes the folder, lets apply put its substituted render into the cluster,
// and checks that the target reports the divergence and commits nothing, not even an
// unrelated change of another of its objects.
func holdsWrites(t *testing.T, ns, folder string, pushed map[string]string, apply func()) {
	t.Helper()
	r := newRepo(t)
	tip := kzPush(t, r, pushed, "a folder with a substitution variable")
	apply()

	kzStartOperator(t, ns, r)
	gt := kzTarget(t, ns, "live", folder, configMapsRule())
	cond := waitCondition(t, gt, kzConds(gt), v1.ConditionRenderMatchesLive, metav1.ConditionFalse, v1.ReasonRenderDoesNotMatchLive)
	t.Logf("RenderMatchesLive: %s", cond.Message)
	for _, want := range []string{"${GREETING}", "data.message", ns + "/greeting"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("the condition does not name %q: %q", want, cond.Message)
		}
	}
	if ready := condition(t, gt, kzConds(gt), v1.ConditionReady); ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != v1.ReasonRenderDoesNotMatchLive {
		t.Errorf("Ready is %+v, want False with %s", ready, v1.ReasonRenderDoesNotMatchLive)
	}
	// The start's snapshot would have written hello over the variable: it was held.
	if log := r.log(); len(log) != 1 || log[0].SHA != tip {
		t.Fatalf("the held start made commits: %q", subjects(log))
	}

	// An unrelated change of another object of the target is held back too. The worker
	// counts each batch it holds back, which tells when this one was decided.
	held := kzRefusals(t, "render-does-not-match-live")
	kzUpdateConfigMap(t, ns, "other", func(c *corev1.ConfigMap) { c.Data["color"] = "green" })
	waitFor(t, "the change to be held back", func() bool { return kzRefusals(t, "render-does-not-match-live") > held })
	// A CommitRequest is told the changes are held (kept, not dropped), not "pushed".
	kzHeldProbe(t, gt, "the held change", "${GREETING}")
	if log := r.log(); len(log) != 1 {
		t.Fatalf("a held change was committed: %q", subjects(log))
	}
	kzAssertFilesAre(t, r, pushed)
	if c := condition(t, gt, kzConds(gt), v1.ConditionRenderMatchesLive); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("RenderMatchesLive after the held change: %+v", c)
	}
}

// A shell script's ${HOME} is in Git and live alike: the render matches live, and an edit
// of the object is written, the script and its token kept.
func TestALiteralTokenEqualToLiveLetsWritesFlow(t *testing.T) {
	ns := newNamespace(t, nil)
	path := "scripts/" + ns + "/core/configmaps/tools.yaml"
	doc := `apiVersion: v1
kind: ConfigMap
metadata:
  name: tools
  namespace: ` + ns + `
data:
  # run.sh reads ${HOME} at run time, not at apply time.
  run.sh: |
    #!/bin/sh
    echo "home is ${HOME}, shell is $(basename "$SHELL")"
  color: blue
`
	r := newRepo(t)
	pushed := map[string]string{"scripts/README.md": "# scripts\n", path: doc}
	tip := kzPush(t, r, pushed, "a script with a literal ${HOME}")
	kzApplyDocs(t, doc)
	gt := kzStartInSync(t, r, ns, "scripts", "scripts", tip, configMapsRule())

	files := kzSnapshotFiles(t, r)
	kzUpdateConfigMap(t, ns, "tools", func(c *corev1.ConfigMap) { c.Data["color"] = "green" })
	waitFor(t, "the edit in Git", func() bool { return strings.Contains(r.file(path), "color: green") })
	kzOneCommitChanging(t, r, gt, "color", tip, files, path)
	if got, want := r.file(path), strings.Replace(doc, "color: blue", "color: green", 1); got != want {
		t.Errorf("the document was not edited in place:\n%s\nwant:\n%s", got, want)
	}
	waitCondition(t, gt, kzConds(gt), v1.ConditionRenderMatchesLive, metav1.ConditionTrue, "")
	targetReady(t, gt)
}

// kzRefusals reads gitops_reverser_refusals_total of a reason from the registry the
// operators of this process record into.
func kzRefusals(t *testing.T, reason string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "gitops_reverser_refusals_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
