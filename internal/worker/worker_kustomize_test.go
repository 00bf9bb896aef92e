package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// The overlay clusters/dev renders a read-only base outside the target's folder and a
// Deployment and a ConfigMap of its own, under labels:, commonAnnotations:, images: and
// replicas: entries.
var overlayRepo = map[string]string{
	"base/kustomization.yaml": "resources:\n- web.yaml\n",
	"base/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.0
`,
	"clusters/dev/kustomization.yaml": `# The dev overlay.
resources:
- ../../base
- api.yaml
- settings.yaml
namespace: team-a
labels:
- pairs:
    env: dev
    owner: platform
commonAnnotations:
  team: a
images:
- name: busybox # the api image
  newTag: "1.36"
replicas:
- name: api
  count: 2
`,
	"clusters/dev/api.yaml": `# The API server.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: busybox:1.0
        env:
        - name: MODE
          value: slow # how fast it answers
`,
	"clusters/dev/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue # the color\n",
}

var deploymentType = layout.TypeInfo{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}

// overlayRig pushes the overlay and returns the rig and the folder's render.
func overlayRig(t *testing.T) (*rig, map[string][]byte) {
	t.Helper()
	r := rigOn(t, overlayRepo)
	files := kustomize.MapFiles{}
	for p, c := range overlayRepo {
		files[p] = []byte(c)
	}
	f, err := kustomize.Load(files, "clusters/dev", []string{"kustomization.yaml", "api.yaml", "settings.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	render := map[string][]byte{}
	for _, o := range f.Objects() {
		render[o.ID.Name] = o.Doc
	}
	return r, render
}

func liveEvent(typ layout.TypeInfo, name string, doc []byte) Event {
	return Event{Target: "team/live", Author: Author{Name: "alice", Email: "alice@example.com"}, Op: OpUpsert, Type: typ,
		ID: layout.Identity{Group: typ.Group, Kind: typ.Kind, Namespace: "team-a", Name: name}, Doc: doc}
}

func TestAnInSyncOverlayWritesNothing(t *testing.T) {
	r, render := overlayRig(t)
	before := len(r.log())
	r.submit(liveEvent(deploymentType, "web", render["web"]))
	r.submit(liveEvent(deploymentType, "api", render["api"]))
	r.submit(liveEvent(configMapType, "settings", render["settings"]))
	st := r.settled()
	if got := len(r.log()); got != before {
		t.Fatalf("an in-sync folder made %d commits: %v", got-before, subjects(r.log()))
	}
	if st.Boundary["team/live"] != "" {
		t.Fatalf("an in-sync folder was refused: %s", st.Boundary["team/live"])
	}
	for p, want := range overlayRepo {
		if got := r.file(p); got != want {
			t.Fatalf("%s changed:\n%s", p, got)
		}
	}
}

// Each live change lands in the one place that produces the field, and nothing else of the
// folder changes by a byte.
func TestALiveChangeLandsWhereTheRenderTakesIt(t *testing.T) {
	cases := []struct {
		name, object, from, to string
		// file is the one file that changes, by replacing was with is.
		file, was, is string
	}{
		{name: "an image goes to the overlay's images entry, tag and digest together",
			object: "api", from: "busybox:1.36", to: "busybox:1.37@sha256:0123",
			file: "clusters/dev/kustomization.yaml", was: "  newTag: \"1.36\"\n", is: "  newTag: \"1.37\"\n  digest: sha256:0123\n"},
		{name: "an image of the read-only base gets an overlay images entry",
			object: "web", from: "nginx:1.0", to: "nginx:1.1",
			file: "clusters/dev/kustomization.yaml", was: "  newTag: \"1.36\"\n", is: "  newTag: \"1.36\"\n- name: nginx\n  newTag: \"1.1\"\n"},
		{name: "a replica count goes to the replicas entry",
			object: "api", from: "replicas: 2", to: "replicas: 5",
			file: "clusters/dev/kustomization.yaml", was: "  count: 2\n", is: "  count: 5\n"},
		{name: "an unmanaged field is written through with its comments",
			object: "api", from: "value: slow", to: "value: fast",
			file: "clusters/dev/api.yaml", was: "value: slow", is: "value: fast"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, render := overlayRig(t)
			r.submit(liveEvent(deploymentType, c.object, []byte(strings.Replace(string(render[c.object]), c.from, c.to, 1))))
			r.settled()
			for p, was := range overlayRepo {
				want := was
				if p == c.file {
					want = strings.Replace(was, c.was, c.is, 1)
				}
				if got := r.file(p); got != want {
					t.Fatalf("%s:\n%s\nwant:\n%s", p, got, want)
				}
			}
		})
	}
}

func TestAnEditOfABuildOwnedFieldIsRefusedAndWritesNothing(t *testing.T) {
	r, render := overlayRig(t)
	before := len(r.log())
	live := strings.Replace(string(render["settings"]), "env: dev", "env: prod", 1)
	r.submit(liveEvent(configMapType, "settings", []byte(live)))
	var st Status
	r.waitFor("the refusal", func() bool {
		st = r.settled()
		return st.Boundary["team/live"] != ""
	})
	if !strings.Contains(st.Boundary["team/live"], kustomize.CodeRenderRefused) || !strings.Contains(st.Boundary["team/live"], "metadata.labels.env") {
		t.Fatalf("the refusal does not name the code and field: %s", st.Boundary["team/live"])
	}
	if got := len(r.log()); got != before {
		t.Fatalf("a refused batch made %d commits", got-before)
	}
}

func TestDeletingAnInheritedObjectWritesAPatchDelete(t *testing.T) {
	r, _ := overlayRig(t)
	r.submit(Event{Target: "team/live", Author: Author{Name: "alice"}, Op: OpDelete, Type: deploymentType,
		ID: layout.Identity{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "web"}})
	r.settled()
	patch := r.file("clusters/dev/delete-deployment-team-a-web.yaml")
	if !strings.Contains(patch, "$patch: delete") {
		t.Fatalf("the delete patch:\n%s", patch)
	}
	if k := r.file("clusters/dev/kustomization.yaml"); !strings.Contains(k, "patches:\n- path: delete-deployment-team-a-web.yaml\n") {
		t.Fatalf("the patch is not listed:\n%s", k)
	}
	if got := r.file("base/web.yaml"); got != overlayRepo["base/web.yaml"] {
		t.Fatal("the read-only base changed")
	}
}

func TestAFolderThatBecomesAKustomizationIsWrittenThroughItsRender(t *testing.T) {
	r := newRig(t)
	r.submit(upsert("alice", "team-a", "other", "one"))
	r.settled()
	_, render := overlayRig(t) // the render of the overlay, from a rig of its own
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: overlayRepo}); err != nil {
		t.Fatal(err)
	}
	commits := len(r.log())
	// The worker plans on the tip it knows, finds the remote moved, and replays on the
	// folder that is a kustomization now: the in-sync object needs no write.
	r.submit(liveEvent(deploymentType, "api", render["api"]))
	r.settled()
	if got := len(r.log()); got != commits {
		t.Fatalf("an in-sync object made %d commits after the folder became a kustomization: %v", got-commits, subjects(r.log()))
	}
	for p, want := range overlayRepo {
		if got := r.file(p); got != want {
			t.Fatalf("%s changed:\n%s", p, got)
		}
	}
}

func TestANewObjectBecomesAFileListedUnderTheRootsResources(t *testing.T) {
	r, _ := overlayRig(t)
	fresh := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n  namespace: team-a\n" +
		"  labels:\n    env: dev\n    owner: platform\n  annotations:\n    team: a\ndata:\n  size: small\n"
	r.submit(liveEvent(configMapType, "fresh", []byte(fresh)))
	st := r.settled()
	if st.Boundary["team/live"] != "" {
		t.Fatalf("the new object was refused: %s", st.Boundary["team/live"])
	}
	if got := r.file("clusters/dev/fresh-configmap.yaml"); !strings.Contains(got, "size: small") {
		t.Fatalf("the new file:\n%s", got)
	}
	want := strings.Replace(overlayRepo["clusters/dev/kustomization.yaml"], "- settings.yaml\n", "- settings.yaml\n- fresh-configmap.yaml\n", 1)
	if got := r.file("clusters/dev/kustomization.yaml"); got != want {
		t.Fatalf("kustomization.yaml:\n%s\nwant:\n%s", got, want)
	}
}

func TestANewObjectTheBuildWouldChangeIsRefused(t *testing.T) {
	r, _ := overlayRig(t)
	// Without the overlay's labels the render of the new file would not equal live.
	r.submit(liveEvent(configMapType, "bare", configMap("team-a", "bare", "x")))
	var st Status
	r.waitFor("the refusal", func() bool {
		st = r.settled()
		return st.Boundary["team/live"] != ""
	})
	if msg := st.Boundary["team/live"]; !strings.Contains(msg, "kustomize-render-refused") || !strings.Contains(msg, "metadata") {
		t.Fatalf("the refusal %q does not name the code and field", msg)
	}
	if r.hasFile("clusters/dev/bare-configmap.yaml") {
		t.Fatal("a refused new object was written")
	}
}

func TestADocumentNoRenderListsIsWrittenAsAPlainDocument(t *testing.T) {
	files := map[string]string{"clusters/dev/extra/notes.yaml": "# kept by hand\n" + string(configMap("team-a", "notes", "one"))}
	for p, c := range overlayRepo {
		files[p] = c
	}
	r := rigOn(t, files)
	r.submit(upsert("alice", "team-a", "notes", "two"))
	st := r.settled()
	if st.Boundary["team/live"] != "" {
		t.Fatalf("a document outside the render was refused: %s", st.Boundary["team/live"])
	}
	if got, want := r.file("clusters/dev/extra/notes.yaml"), strings.Replace(files["clusters/dev/extra/notes.yaml"], "key: one", "key: two", 1); got != want {
		t.Fatalf("notes.yaml:\n%s\nwant:\n%s", got, want)
	}
}

// The bug that kustomize-aware writing fixes: a folder under labels: and
// commonAnnotations:, applied as rendered, made a commit on every reconcile and baked the
// overlay's labels into the base (docs/kustomize.md#an-in-sync-folder-writes-nothing).
// Every resync of it, the first and each later one, writes nothing.
func TestEveryResyncOfAnInSyncOverlayWritesNothing(t *testing.T) {
	r, render := overlayRig(t)
	snapshot := func() []Snapshot {
		deploys := Snapshot{Target: "team/live", Scope: Scope{Group: "apps", Kind: "Deployment", Namespace: "team-a"}, Type: deploymentType}
		configs := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType}
		for _, name := range []string{"web", "api"} {
			deploys.Objects = append(deploys.Objects, SnapshotObject{ID: layout.Identity{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: name}, Doc: render[name]})
		}
		configs.Objects = append(configs.Objects, SnapshotObject{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}, Doc: render["settings"]})
		return []Snapshot{deploys, configs}
	}
	for i := 0; i < 3; i++ {
		if err := r.worker.Resync(r.ctx(), snapshot()...); err != nil {
			t.Fatal(err)
		}
		st := r.settled()
		if got := len(r.log()); got != 1 {
			t.Fatalf("resync %d of an in-sync folder made commits: %v", i+1, subjects(r.log()))
		}
		if st.Fidelity["team/live"].State != FidelityTrue || st.Boundary["team/live"] != "" {
			t.Fatalf("resync %d: fidelity %+v, refusal %q", i+1, st.Fidelity["team/live"], st.Boundary["team/live"])
		}
	}
	for p, want := range overlayRepo {
		if got := r.file(p); got != want {
			t.Fatalf("%s changed:\n%s", p, got)
		}
	}
}
