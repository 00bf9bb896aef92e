//go:build e2e

package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
)

// Unsupported features (docs/kustomize.md#unsupported-features) through the operator: a
// target folder whose kustomization uses a feature the writer does not model is refused by
// name before anything is written, and the refusal of one folder does not stop the branch's
// other targets.
func TestUnsupportedKustomizeFeaturesRefuseTheirFolder(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  color: blue\n"
	cases := []struct {
		slug, feature, kustomization string
	}{
		{"name-prefix", "namePrefix", "namePrefix: dev-\nresources:\n- cm.yaml\n"},
		{"generator", "configMapGenerator", "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: generated\n  literals:\n  - color=red\n"},
		{"inline-patch", "inline patches", "resources:\n- cm.yaml\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: cm\n    data:\n      color: red\n"},
		{"remote-base", "remote base", "resources:\n- cm.yaml\n- https://github.com/example/shop//deploy?ref=v1.0.0\n"},
		{"components", "components", "resources:\n- cm.yaml\ncomponents:\n- ../../component\n"},
		{"json6902", "patchesJson6902", "resources:\n- cm.yaml\npatchesJson6902:\n- target:\n    version: v1\n    kind: ConfigMap\n    name: cm\n  path: patch.json\n"},
	}
	ns := newNamespace(t, nil)
	r := newRepo(t)
	pushed := map[string]string{
		"component/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs:\n    team: a\n",
	}
	for _, c := range cases {
		pushed["refused/"+c.slug+"/kustomization.yaml"] = c.kustomization
		pushed["refused/"+c.slug+"/cm.yaml"] = cm
	}
	pushed["refused/json6902/patch.json"] = `[{"op": "replace", "path": "/data/color", "value": "red"}]` + "\n"
	tip := kzPush(t, r, pushed, "folders the writer cannot edit")
	// The live object every folder would render something like: each target's snapshot
	// holds it, so each target has something to write and must refuse to.
	create(t, configMap(ns, "cm", map[string]string{"color": "blue"}))

	kzStartOperator(t, ns, r)
	targets := make([]*v1.GitTarget, len(cases))
	for i, c := range cases {
		targets[i] = kzTarget(t, ns, c.slug, "refused/"+c.slug, configMapsRule())
	}
	for i, c := range cases {
		gt := targets[i]
		cond := waitCondition(t, gt, kzConds(gt), v1.ConditionGitPathAccepted, metav1.ConditionFalse, v1.ReasonUnsupportedContent)
		if !strings.Contains(cond.Message, c.feature) || !strings.Contains(cond.Message, "kustomization.yaml") {
			t.Errorf("%s: the refusal does not name the feature %q and its file: %q", c.slug, c.feature, cond.Message)
		}
		t.Logf("%s: %s", c.slug, cond.Message)
		if ready := condition(t, gt, kzConds(gt), v1.ConditionReady); ready == nil || ready.Status != metav1.ConditionFalse {
			t.Errorf("%s: a refused folder's target is Ready: %+v", c.slug, ready)
		}
	}
	// Every folder was planned and refused: nothing was committed, no byte changed.
	if log := r.log(); len(log) != 1 || log[0].SHA != tip {
		t.Fatalf("refused folders made commits: %q", subjects(log))
	}
	kzAssertFilesAre(t, r, pushed)
}

// A refused kustomize folder does not stop the other targets of its branch
// (docs/branch-worker.md: "Other targets on the branch carry on"): a plain folder beside it
// is still written, and its target is Ready.
func TestARefusedKustomizeFolderDoesNotStopItsBranch(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	pushed := map[string]string{
		"refused/kustomization.yaml": "namePrefix: dev-\nresources:\n- cm.yaml\n",
		"refused/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  color: blue\n",
	}
	tip := kzPush(t, r, pushed, "a folder the writer cannot edit")
	create(t, configMap(ns, "cm", map[string]string{"color": "blue"}))

	kzStartOperator(t, ns, r)
	refused := kzTarget(t, ns, "refused", "refused", configMapsRule())
	waitCondition(t, refused, kzConds(refused), v1.ConditionGitPathAccepted, metav1.ConditionFalse, v1.ReasonUnsupportedContent)

	plain := kzTarget(t, ns, "plain", "plain", configMapsRule())
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, gt := range []*v1.GitTarget{plain, refused} {
			if err := cp.Client.Get(context.Background(), client.ObjectKeyFromObject(gt), gt); err != nil {
				t.Logf("GitTarget %s: %v", gt.Name, err)
			}
			for _, c := range gt.Status.Conditions {
				t.Logf("GitTarget %s: %s=%s %s: %s", gt.Name, c.Type, c.Status, c.Reason, c.Message)
			}
		}
		t.Logf("history: %q", subjects(r.log()))
	})
	start := time.Now()
	waitFor(t, "the plain target's document", func() bool { return r.has("plain/" + ns + "/core/configmaps/cm.yaml") })
	t.Logf("the plain target's document landed %s after its target was created", time.Since(start).Round(time.Millisecond))
	targetReady(t, plain)
	for _, f := range strings.Fields(kzGit(t, r, "diff", "--name-only", tip, "main")) {
		if !strings.HasPrefix(f, "plain/") {
			t.Errorf("a commit changed %s of the refused folder", f)
		}
	}
	if cond := condition(t, refused, kzConds(refused), v1.ConditionGitPathAccepted); cond == nil || cond.Reason != v1.ReasonUnsupportedContent {
		t.Errorf("the refusal did not stay: %+v", cond)
	}
}

// refusalRepo is an overlay whose labels: entry sets env on every object it renders.
func refusalRepo(ns string) map[string]string {
	return map[string]string{
		"apps/dev/README.md": "# dev\n",
		"apps/dev/kustomization.yaml": `resources:
- settings.yaml
- flags.yaml
namespace: ` + ns + `
labels:
- pairs:
    env: dev # the build sets it
`,
		"apps/dev/settings.yaml": "# Shop settings.\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue # the theme\n",
		"apps/dev/flags.yaml":    "# Feature flags.\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  beta: \"off\" # not yet\n",
	}
}

// The verification render (docs/kustomize.md#verification-render) through the operator: a
// live edit of a field the build owns (a label the overlay's labels: entry sets) cannot be
// written to the source in a way that renders back, so the batch is refused, nothing is
// written, and later changes are still written.
func TestAnEditOfALabelTheOverlaySetsIsRefused(t *testing.T) {
	ns := newNamespace(t, nil)
	const folder = "apps/dev"
	pushed := refusalRepo(ns)
	r, tip, _ := kzPushAndApply(t, pushed, folder, "the dev overlay")
	gt := kzStartInSync(t, r, ns, "dev", folder, tip, configMapsRule())

	kzUpdateConfigMap(t, ns, "settings", func(c *corev1.ConfigMap) { c.Labels["env"] = "prod" })
	cond := waitCondition(t, gt, kzConds(gt), v1.ConditionGitPathAccepted, metav1.ConditionFalse, v1.ReasonWriteBoundaryRefused)
	t.Logf("refused: %s", cond.Message)
	for _, want := range []string{kustomize.CodeRenderRefused, "settings", "metadata.labels.env"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("the refusal does not name %q: %q", want, cond.Message)
		}
	}
	// The refused change is kept (tried again when the folder changes), so a CommitRequest
	// hears that the target's changes are held, not that nothing is pending.
	kzHeldProbe(t, gt, "the refused label", "metadata.labels.env")
	if log := r.log(); len(log) != 1 {
		t.Fatalf("a refused batch made commits: %q", subjects(log))
	}
	kzAssertFilesAre(t, r, pushed)

	// A later change of another object is written, while the refused change stays kept.
	files := kzSnapshotFiles(t, r)
	kzUpdateConfigMap(t, ns, "flags", func(c *corev1.ConfigMap) { c.Data["beta"] = "on" })
	waitFor(t, "the flag in Git", func() bool { return strings.Contains(r.file(folder+"/flags.yaml"), `beta: "on"`) })
	flagged := r.log()[0].SHA
	kzCommitChanged(t, r, flagged, "flag", tip, files, folder+"/flags.yaml")
	tip = flagged
	if got, want := r.file(folder+"/flags.yaml"), strings.Replace(pushed[folder+"/flags.yaml"], `beta: "off"`, `beta: "on"`, 1); got != want {
		t.Errorf("flags.yaml:\n%s\nwant:\n%s", got, want)
	}
	// The refused label is still kept: once the status names the flag's commit, the folder
	// condition still says so.
	waitFor(t, "the status to name the flag's commit", func() bool {
		return cp.Client.Get(ctxOf(t), client.ObjectKeyFromObject(gt), gt) == nil && gt.Status.LastCommit == flagged
	})
	if c := condition(t, gt, kzConds(gt), v1.ConditionGitPathAccepted); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("GitPathAccepted after a later write, with the refused change still kept: %+v", c)
	}

	// Undoing the label and changing a field of the object the build does not own: written
	// through to its source, the label left to the build.
	files = kzSnapshotFiles(t, r)
	kzUpdateConfigMap(t, ns, "settings", func(c *corev1.ConfigMap) {
		c.Labels["env"] = "dev"
		c.Data["color"] = "green"
	})
	waitFor(t, "the color in Git", func() bool { return strings.Contains(r.file(folder+"/settings.yaml"), "color: green") })
	kzOneCommitChanging(t, r, gt, "color", tip, files, folder+"/settings.yaml")
	if got, want := r.file(folder+"/settings.yaml"), strings.Replace(pushed[folder+"/settings.yaml"], "color: blue", "color: green", 1); got != want {
		t.Errorf("settings.yaml:\n%s\nwant:\n%s", got, want)
	}
	targetReady(t, gt)
}
