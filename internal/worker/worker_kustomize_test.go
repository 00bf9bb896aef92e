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

func TestAnImageChangeEditsTheOverlaysImagesEntry(t *testing.T) {
	r, render := overlayRig(t)
	live := strings.Replace(string(render["api"]), "busybox:1.36", "busybox:1.37@sha256:0123", 1)
	r.submit(liveEvent(deploymentType, "api", []byte(live)))
	r.settled()
	k := r.file("clusters/dev/kustomization.yaml")
	if !strings.Contains(k, "- name: busybox # the api image\n  newTag: \"1.37\"\n  digest: sha256:0123\n") {
		t.Fatalf("the images entry was not edited in place:\n%s", k)
	}
	if got := r.file("clusters/dev/api.yaml"); got != overlayRepo["clusters/dev/api.yaml"] {
		t.Fatalf("the source document changed too:\n%s", got)
	}
}

func TestABaseImageChangeAddsAnOverlayEntry(t *testing.T) {
	r, render := overlayRig(t)
	live := strings.Replace(string(render["web"]), "nginx:1.0", "nginx:1.1", 1)
	r.submit(liveEvent(deploymentType, "web", []byte(live)))
	r.settled()
	k := r.file("clusters/dev/kustomization.yaml")
	if !strings.Contains(k, "- name: nginx\n  newTag: \"1.1\"\n") {
		t.Fatalf("no overlay images entry for the base's image:\n%s", k)
	}
	if got := r.file("base/web.yaml"); got != overlayRepo["base/web.yaml"] {
		t.Fatalf("the read-only base changed:\n%s", got)
	}
}

func TestAReplicaChangeEditsTheReplicasEntry(t *testing.T) {
	r, render := overlayRig(t)
	live := strings.Replace(string(render["api"]), "replicas: 2", "replicas: 5", 1)
	r.submit(liveEvent(deploymentType, "api", []byte(live)))
	r.settled()
	k := r.file("clusters/dev/kustomization.yaml")
	if !strings.Contains(k, "- name: api\n  count: 5\n") {
		t.Fatalf("the replicas entry was not edited:\n%s", k)
	}
	if got := r.file("clusters/dev/api.yaml"); got != overlayRepo["clusters/dev/api.yaml"] {
		t.Fatalf("the source document changed too:\n%s", got)
	}
}

func TestAnUnmanagedFieldIsWrittenThroughWithItsComments(t *testing.T) {
	r, render := overlayRig(t)
	live := strings.Replace(string(render["api"]), "value: slow", "value: fast", 1)
	r.submit(liveEvent(deploymentType, "api", []byte(live)))
	r.settled()
	want := strings.Replace(overlayRepo["clusters/dev/api.yaml"], "value: slow", "value: fast", 1)
	if got := r.file("clusters/dev/api.yaml"); got != want {
		t.Fatalf("api.yaml:\n%s\nwant:\n%s", got, want)
	}
	if got := r.file("clusters/dev/kustomization.yaml"); got != overlayRepo["clusters/dev/kustomization.yaml"] {
		t.Fatalf("the kustomization changed too:\n%s", got)
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
