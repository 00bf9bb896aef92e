package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// reviewRepo copies the overlay and lays extra files over it.
func reviewRepo(extra map[string]string) map[string]string {
	out := map[string]string{}
	for p, c := range overlayRepo {
		out[p] = c
	}
	for p, c := range extra {
		out[p] = c
	}
	return out
}

// renderIn renders folder prefix of files and returns the render by name/kind.
func renderIn(t *testing.T, files map[string]string, prefix string) map[string][]byte {
	t.Helper()
	mf := kustomize.MapFiles{}
	var paths []string
	for p, c := range files {
		mf[p] = []byte(c)
		if prefix == "" {
			paths = append(paths, p)
		} else if strings.HasPrefix(p, prefix+"/") {
			paths = append(paths, strings.TrimPrefix(p, prefix+"/"))
		}
	}
	f, err := kustomize.Load(mf, prefix, paths)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, o := range f.Objects() {
		out[o.ID.Kind+"/"+o.ID.Name] = o.Doc
	}
	return out
}

func cmDelete(ns, name string) Event {
	return Event{Target: "team/live", Author: Author{Name: "alice", Email: "alice@example.com"}, Op: OpDelete, Type: configMapType,
		ID: layout.Identity{Kind: "ConfigMap", Namespace: ns, Name: name}}
}

// Deleting the only object of a file the folder's kustomization lists deletes the file and
// its resources: entry (docs/layout.md#deletes), beside the kustomization or in a
// subfolder.
func TestDeletingTheOnlyObjectOfAListedFileRemovesItsResourcesEntry(t *testing.T) {
	for _, file := range []string{"notes.yaml", "extra/notes.yaml"} {
		t.Run(file, func(t *testing.T) {
			files := reviewRepo(map[string]string{
				"clusters/dev/kustomization.yaml": strings.Replace(overlayRepo["clusters/dev/kustomization.yaml"], "- settings.yaml\n", "- settings.yaml\n- "+file+"\n", 1),
				"clusters/dev/" + file:            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  a: b\n",
			})
			r := rigOn(t, files)
			r.submit(cmDelete("team-a", "notes"))
			st := r.settled()
			if b := st.Boundary["team/live"]; b != "" {
				t.Fatalf("the delete was refused: %s", b)
			}
			if r.hasFile("clusters/dev/" + file) {
				t.Fatal("the ConfigMap's file is still there")
			}
			if got, want := r.file("clusters/dev/kustomization.yaml"), overlayRepo["clusters/dev/kustomization.yaml"]; got != want {
				t.Fatalf("kustomization.yaml:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// Deleting a ConfigMap that shares its name with the Deployment a replicas: entry names
// must leave that entry alone: it scales the Deployment, which is still live.
func TestDeletingAConfigMapNamedLikeAReplicasEntryKeepsTheEntry(t *testing.T) {
	files := reviewRepo(map[string]string{
		"clusters/dev/settings.yaml": overlayRepo["clusters/dev/settings.yaml"] + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\ndata:\n  a: b\n",
	})
	r := rigOn(t, files)
	before := len(r.log())
	r.submit(cmDelete("team-a", "api"))
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("the delete was refused: %s", b)
	}
	if got := len(r.log()); got != before+1 {
		t.Fatalf("%d commits for one delete", got-before)
	}
	if got, want := r.file("clusters/dev/settings.yaml"), overlayRepo["clusters/dev/settings.yaml"]; got != want {
		t.Fatalf("settings.yaml:\n%s\nwant:\n%s", got, want)
	}
	if got, want := r.file("clusters/dev/kustomization.yaml"), overlayRepo["clusters/dev/kustomization.yaml"]; got != want {
		t.Fatalf("kustomization.yaml:\n%s\nwant:\n%s", got, want)
	}
}

const twoConfigMaps = "# two maps\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: \"1\" # first\n---\n# second doc\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\ndata:\n  b: \"2\" # second\n"

func multiDocRepo() map[string]string {
	return reviewRepo(map[string]string{
		"clusters/dev/kustomization.yaml": strings.Replace(overlayRepo["clusters/dev/kustomization.yaml"], "- settings.yaml\n", "- settings.yaml\n- maps.yaml\n", 1),
		"clusters/dev/maps.yaml":          twoConfigMaps,
	})
}

// One batch deletes the first document of a two-document file and edits the second.
func TestDeleteOneDocAndEditTheNextInOneBatch(t *testing.T) {
	files := multiDocRepo()
	render := renderIn(t, files, "clusters/dev")
	r := rigOn(t, files)
	r.submit(cmDelete("team-a", "one"))
	r.submit(liveEvent(configMapType, "two", []byte(strings.Replace(string(render["ConfigMap/two"]), `b: "2"`, `b: "3"`, 1))))
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if got, want := r.file("clusters/dev/maps.yaml"), "# second doc\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\ndata:\n  b: \"3\" # second\n"; got != want {
		t.Fatalf("maps.yaml:\n%q\nwant:\n%q", got, want)
	}
}

// One batch edits the first document and deletes the second.
func TestEditOneDocAndDeleteTheNextInOneBatch(t *testing.T) {
	files := multiDocRepo()
	render := renderIn(t, files, "clusters/dev")
	r := rigOn(t, files)
	r.submit(liveEvent(configMapType, "one", []byte(strings.Replace(string(render["ConfigMap/one"]), `a: "1"`, `a: "5"`, 1))))
	r.submit(cmDelete("team-a", "two"))
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if got, want := r.file("clusters/dev/maps.yaml"), "# two maps\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: \"5\" # first\n"; got != want {
		t.Fatalf("maps.yaml:\n%q\nwant:\n%q", got, want)
	}
}

// A new object and a change to it in one batch: the file holds the last state.
func TestCreateThenChangeANewObjectInOneBatch(t *testing.T) {
	r, _ := overlayRig(t)
	fresh := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n  namespace: team-a\n" +
		"  labels:\n    env: dev\n    owner: platform\n  annotations:\n    team: a\ndata:\n  size: small\n"
	r.submit(liveEvent(configMapType, "fresh", []byte(fresh)))
	r.submit(liveEvent(configMapType, "fresh", []byte(strings.Replace(fresh, "small", "large", 1))))
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if got := r.file("clusters/dev/fresh-configmap.yaml"); !strings.Contains(got, "size: large") || strings.Contains(got, "small") {
		t.Fatalf("the new file:\n%s", got)
	}
}

// Two changes to the same object in one batch, to an entry and to the source.
func TestTwoChangesOfOneObjectInOneBatch(t *testing.T) {
	r, render := overlayRig(t)
	one := strings.Replace(string(render["api"]), "busybox:1.36", "busybox:1.37", 1)
	two := strings.Replace(one, "value: slow", "value: fast", 1)
	r.submit(liveEvent(deploymentType, "api", []byte(one)))
	r.submit(liveEvent(deploymentType, "api", []byte(two)))
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if got := r.file("clusters/dev/api.yaml"); !strings.Contains(got, "value: fast # how fast it answers") {
		t.Fatalf("api.yaml:\n%s", got)
	}
	if got := r.file("clusters/dev/kustomization.yaml"); !strings.Contains(got, "newTag: \"1.37\"") {
		t.Fatalf("kustomization.yaml:\n%s", got)
	}
}

// A snapshot of every live object of the overlay, which renames the namespace of its
// sources, writes nothing and deletes nothing.
func TestASweepOfAnInSyncRenamingOverlayDeletesNothing(t *testing.T) {
	files := reviewRepo(map[string]string{
		"clusters/dev/settings.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\ndata:\n  color: blue # the color\n",
		"clusters/dev/other.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  namespace: elsewhere\ndata:\n  x: y\n",
		"clusters/dev/kustomization.yaml": strings.Replace(overlayRepo["clusters/dev/kustomization.yaml"], "- settings.yaml\n", "- settings.yaml\n- other.yaml\n", 1),
	})
	render := renderIn(t, files, "clusters/dev")
	r := rigOn(t, files)
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneAlways})
	before := len(r.log())
	snaps := []Snapshot{
		{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType, Objects: []SnapshotObject{
			{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}, Doc: render["ConfigMap/settings"]},
			{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "other"}, Doc: render["ConfigMap/other"]},
		}},
		{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "elsewhere"}, Type: configMapType},
		{Target: "team/live", Scope: Scope{Kind: "ConfigMap"}, Type: configMapType, Objects: []SnapshotObject{
			{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}, Doc: render["ConfigMap/settings"]},
			{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "other"}, Doc: render["ConfigMap/other"]},
		}},
		{Target: "team/live", Scope: Scope{Group: "apps", Kind: "Deployment", Namespace: "team-a"}, Type: deploymentType, Objects: []SnapshotObject{
			{ID: layout.Identity{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "api"}, Doc: render["Deployment/api"]},
			{ID: layout.Identity{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "web"}, Doc: render["Deployment/web"]},
		}},
	}
	if err := r.worker.Resync(r.ctx(), snaps...); err != nil {
		t.Fatal(err)
	}
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if got := len(r.log()); got != before {
		t.Fatalf("an in-sync sweep made %d commits: %v", got-before, subjects(r.log()))
	}
	for p, want := range files {
		if got := r.file(p); got != want {
			t.Fatalf("%s changed:\n%s", p, got)
		}
	}
}

// A kustomization at the repository root (target path ".").
func TestAKustomizationAtTheRepositoryRoot(t *testing.T) {
	files := map[string]string{
		"kustomization.yml": "resources:\n- settings.yaml\nnamespace: team-a\n",
		"settings.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue # the color\n",
	}
	render := renderIn(t, files, "")
	r := rigOn(t, files)
	r.setTarget(TargetConfig{Name: "team/live", Path: ".", Prune: PruneOnEvent})
	r.submit(liveEvent(configMapType, "settings", []byte(strings.Replace(string(render["ConfigMap/settings"]), "blue", "red", 1))))
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if got, want := r.file("settings.yaml"), strings.Replace(files["settings.yaml"], "blue", "red", 1); got != want {
		t.Fatalf("settings.yaml:\n%s", got)
	}
	r.submit(cmDelete("team-a", "settings"))
	st = r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if r.hasFile("settings.yaml") {
		t.Fatal("settings.yaml is still there")
	}
	if got := r.file("kustomization.yml"); strings.Contains(got, "settings.yaml") {
		t.Fatalf("kustomization.yml:\n%s", got)
	}
}

// A CRLF source document keeps its line endings and comments when a field is written through.
func TestACRLFSourceDocumentKeepsItsLineEndings(t *testing.T) {
	crlf := strings.ReplaceAll(overlayRepo["clusters/dev/settings.yaml"], "\n", "\r\n")
	files := reviewRepo(map[string]string{"clusters/dev/settings.yaml": crlf})
	render := renderIn(t, files, "clusters/dev")
	r := rigOn(t, files)
	r.submit(liveEvent(configMapType, "settings", []byte(strings.Replace(string(render["ConfigMap/settings"]), "blue", "red", 1))))
	st := r.settled()
	if b := st.Boundary["team/live"]; b != "" {
		t.Fatalf("refused: %s", b)
	}
	if got, want := r.file("clusters/dev/settings.yaml"), strings.Replace(crlf, "blue", "red", 1); got != want {
		t.Fatalf("settings.yaml:\n%q\nwant:\n%q", got, want)
	}
}

// A resync that finds one object of a one-object file gone must still land the other
// changes of the snapshot (and the delete).
func TestASweepThatDeletesAListedFileLandsTheOtherChanges(t *testing.T) {
	files := reviewRepo(map[string]string{
		"clusters/dev/kustomization.yaml": strings.Replace(overlayRepo["clusters/dev/kustomization.yaml"], "- settings.yaml\n", "- settings.yaml\n- notes.yaml\n", 1),
		"clusters/dev/notes.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  a: b\n",
	})
	render := renderIn(t, files, "clusters/dev")
	r := rigOn(t, files)
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneAlways})
	snap := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType, Objects: []SnapshotObject{
		{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}, Doc: []byte(strings.Replace(string(render["ConfigMap/settings"]), "blue", "red", 1))},
	}}
	if err := r.worker.Resync(r.ctx(), snap); err != nil {
		t.Fatal(err)
	}
	st := r.settled()
	if got := r.file("clusters/dev/settings.yaml"); !strings.Contains(got, "color: red") {
		t.Fatalf("the live change of settings was not written (boundary %q):\n%s", st.Boundary["team/live"], got)
	}
	if r.hasFile("clusters/dev/notes.yaml") {
		t.Fatalf("notes.yaml was not swept (boundary %q)", st.Boundary["team/live"])
	}
}
