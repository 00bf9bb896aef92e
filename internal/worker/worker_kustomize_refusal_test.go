package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// Each write the render cannot place is refused as a whole: no commit, no byte changed,
// and the target's status names the refusal, the object and the field.
func TestAWriteTheRenderCannotPlaceIsRefusedAndWritesNothing(t *testing.T) {
	const settings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n"
	cases := []struct {
		name   string
		files  map[string]string
		typ    layout.TypeInfo
		object string
		edit   func(render string) string
		code   string
		field  string
	}{
		{
			name: "a list the build and the user both rewrote",
			files: map[string]string{
				"clusters/dev/kustomization.yaml": "resources:\n- app.yaml\nnamespace: team-a\npatches:\n- path: args.yaml\n",
				"clusters/dev/app.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector:\n    matchLabels: {app: app}\n" +
					"  template:\n    metadata:\n      labels: {app: app}\n    spec:\n      containers:\n      - name: app\n        image: busybox\n        args: [serve, --slow]\n",
				"clusters/dev/args.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        args: [serve, --fast]\n",
			},
			typ: deploymentType, object: "app",
			edit:  func(r string) string { return strings.Replace(r, "- --fast", "- --fastest", 1) },
			code:  kustomize.CodeUnplaceable,
			field: "args",
		},
		{
			name: "a field of a base outside the folder",
			files: map[string]string{
				"base/kustomization.yaml":         "resources:\n- settings.yaml\n",
				"base/settings.yaml":              settings,
				"clusters/dev/kustomization.yaml": "resources:\n- ../../base\nnamespace: team-a\n",
			},
			typ: configMapType, object: "settings",
			edit:  func(r string) string { return strings.Replace(r, "color: blue", "color: green", 1) },
			code:  kustomize.CodeEscapesScope,
			field: "data.color",
		},
		{
			name: "a file two render roots read",
			files: map[string]string{
				"clusters/dev/base/kustomization.yaml": "resources:\n- settings.yaml\n",
				"clusters/dev/base/settings.yaml":      settings,
				"clusters/dev/a/kustomization.yaml":    "resources:\n- ../base\nnamespace: team-a\n",
				"clusters/dev/b/kustomization.yaml":    "resources:\n- ../base\nnamespace: team-b\n",
			},
			typ: configMapType, object: "settings",
			edit:  func(r string) string { return strings.Replace(r, "color: blue", "color: green", 1) },
			code:  kustomize.CodeFanIn,
			field: "data.color",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rigOn(t, c.files)
			render := renderOf(t, c.files, c.object)
			r.submit(liveEvent(c.typ, c.object, []byte(c.edit(render))))
			var st Status
			r.waitFor("the refusal", func() bool {
				st = r.settled()
				return st.Boundary["team/live"] != ""
			})
			msg := st.Boundary["team/live"]
			if !strings.Contains(msg, c.code) || !strings.Contains(msg, c.field) || !strings.Contains(msg, c.object) {
				t.Fatalf("the refusal %q does not name %s, the object and the field %s", msg, c.code, c.field)
			}
			if got := len(r.log()); got != 1 {
				t.Fatalf("a refused write made %d commits: %v", got-1, subjects(r.log()))
			}
			for p, want := range c.files {
				if got := r.file(p); got != want {
					t.Fatalf("%s changed:\n%s", p, got)
				}
			}
		})
	}
}

// renderOf renders the team-a object name of the folder clusters/dev (or its first root).
func renderOf(t *testing.T, files map[string]string, name string) string {
	t.Helper()
	mf := kustomize.MapFiles{}
	var folder []string
	for p, c := range files {
		mf[p] = []byte(c)
		if rel, ok := strings.CutPrefix(p, "clusters/dev/"); ok {
			folder = append(folder, rel)
		}
	}
	f, err := kustomize.Load(mf, "clusters/dev", folder)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range f.Objects() {
		if o.ID.Name == name && o.ID.Namespace == "team-a" {
			return string(o.Doc)
		}
	}
	t.Fatalf("the folder does not render team-a/%s", name)
	return ""
}

func TestAKustomizationWithAnUnsupportedFeatureRefusesTheFolder(t *testing.T) {
	files := map[string]string{
		"clusters/dev/kustomization.yaml": "resources:\n- settings.yaml\nnamePrefix: dev-\n",
		"clusters/dev/settings.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\ndata:\n  color: blue\n",
	}
	r := rigOn(t, files)
	r.submit(upsert("alice", "team-a", "other", "one"))
	st := r.waitStatus("the refusal", func(st Status) bool { return st.Refused["team/live"] != "" })
	if msg := st.Refused["team/live"]; !strings.Contains(msg, "namePrefix") || !strings.Contains(msg, "kustomization.yaml") {
		t.Fatalf("the refusal %q does not name the feature and the file", msg)
	}
	if got := len(r.log()); got != 1 {
		t.Fatalf("a refused folder got %d commits", got-1)
	}
}

// A refused write leaves the rest of its batch alone: the other changes of the same window
// land, the refused one writes nothing and is reported.
func TestARefusedWriteDoesNotDropTheRestOfItsBatch(t *testing.T) {
	r, render := overlayRig(t)
	before := len(r.log())
	// One author, one window: a label the overlay owns, and an env value of another object.
	r.submit(liveEvent(configMapType, "settings", []byte(strings.Replace(string(render["settings"]), "env: dev", "env: prod", 1))))
	r.submit(liveEvent(deploymentType, "api", []byte(strings.Replace(string(render["api"]), "value: slow", "value: fast", 1))))
	st := r.settled()
	if msg := st.Boundary["team/live"]; !strings.Contains(msg, kustomize.CodeRenderRefused) || !strings.Contains(msg, "settings") {
		t.Fatalf("the refusal %q does not name the code and the object", msg)
	}
	if got := len(r.log()) - before; got != 1 {
		t.Fatalf("want one commit for the batch's other change, got %d", got)
	}
	if got, want := r.file("clusters/dev/api.yaml"), strings.Replace(overlayRepo["clusters/dev/api.yaml"], "value: slow", "value: fast", 1); got != want {
		t.Fatalf("the other change was not written:\n%s", got)
	}
	for _, p := range []string{"clusters/dev/settings.yaml", "clusters/dev/kustomization.yaml", "base/web.yaml"} {
		if got := r.file(p); got != overlayRepo[p] {
			t.Fatalf("%s changed:\n%s", p, got)
		}
	}
}
