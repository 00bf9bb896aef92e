package kustomize

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// Shared fixtures of the package's unit tests. A repository is a map from a slash path to
// the file's text; a test loads one folder of it and plays the cluster by editing the
// render of an object.

// repoFiles turns a map of texts into the MapFiles Load reads.
func repoFiles(files map[string]string) MapFiles {
	out := MapFiles{}
	for p, c := range files {
		out[p] = []byte(c)
	}
	return out
}

// pathsUnder returns the paths of the files under the folder prefix, relative to it.
func pathsUnder(files map[string]string, prefix string) []string {
	var out []string
	for p := range files {
		switch {
		case prefix == "":
			out = append(out, p)
		case strings.HasPrefix(p, prefix+"/"):
			out = append(out, strings.TrimPrefix(p, prefix+"/"))
		}
	}
	sort.Strings(out)
	return out
}

// tryLoad loads the folder prefix of a repository.
func tryLoad(files map[string]string, prefix string) (*Folder, error) {
	return Load(repoFiles(files), prefix, pathsUnder(files, prefix))
}

// loadFolder loads the folder prefix of a repository; a refusal or a folder without a
// kustomization fails the test.
func loadFolder(t *testing.T, files map[string]string, prefix string) *Folder {
	t.Helper()
	f, err := tryLoad(files, prefix)
	if err != nil {
		t.Fatalf("Load(%q): %v", prefix, err)
	}
	if f == nil {
		t.Fatalf("Load(%q) found no kustomization", prefix)
	}
	return f
}

// loadWithFile loads folder dir of a repository that holds only the folder's
// kustomization and one more file of it, name.
func loadWithFile(t *testing.T, dir, kustomization, name, content string) *Folder {
	t.Helper()
	return loadFolder(t, map[string]string{
		tree.Join(dir, "kustomization.yaml"): kustomization,
		tree.Join(dir, name):                 content,
	}, dir)
}

// loadEnvTokenFolder loads folder prod, whose labels: entry sets env over the ${ENV}
// token of envTokenSettings.
func loadEnvTokenFolder(t *testing.T) *Folder {
	t.Helper()
	return loadWithFile(t, "prod", "resources:\n- settings.yaml\nlabels:\n- pairs:\n    env: prod\n", "settings.yaml", envTokenSettings)
}

// unsupportedOf loads the folder and returns its *UnsupportedError; any other outcome fails
// the test.
func unsupportedOf(t *testing.T, files map[string]string, prefix string) *UnsupportedError {
	t.Helper()
	f, err := tryLoad(files, prefix)
	var u *UnsupportedError
	if !errors.As(err, &u) {
		t.Fatalf("Load(%q) = %v, %v; want an *UnsupportedError", prefix, f != nil, err)
	}
	return u
}

// refusalOf returns the *RefusalError err holds; any other error (or none) fails the test.
func refusalOf(t *testing.T, err error) *RefusalError {
	t.Helper()
	var r *RefusalError
	if !errors.As(err, &r) {
		t.Fatalf("got error %v, want a *RefusalError", err)
	}
	return r
}

// wantRefusal checks that err is a refusal with the code and field.
func wantRefusal(t *testing.T, err error, code, field string) *RefusalError {
	t.Helper()
	r := refusalOf(t, err)
	if r.Code != code || r.Field != field {
		t.Fatalf("refusal %q field %q (%v), want %q field %q", r.Code, r.Field, r, code, field)
	}
	return r
}

// objectID names a rendered object.
func objectID(group, kind, namespace, name string) layout.Identity {
	return layout.Identity{Group: group, Kind: kind, Namespace: namespace, Name: name}
}

// renderOf returns the rendered document of id, decoded.
func renderOf(t *testing.T, f *Folder, id layout.Identity) map[string]any {
	t.Helper()
	obj, ok := f.Lookup(id)
	if !ok {
		t.Fatalf("the folder does not render %s; it renders %v", id, renderedIDs(f))
	}
	return decodeTest(t, obj.Doc)
}

// renderedIDs lists what a folder renders, for messages.
func renderedIDs(f *Folder) []string {
	var out []string
	for _, o := range f.Objects() {
		out = append(out, o.ID.String())
	}
	return out
}

// liveFrom plays the cluster: it takes the render of id, lets edit change it, and returns
// the live document.
func liveFrom(t *testing.T, f *Folder, id layout.Identity, edit func(doc map[string]any)) []byte {
	t.Helper()
	doc := renderOf(t, f, id)
	edit(doc)
	return encodeTest(t, doc)
}

// encodeTest encodes a JSON value as YAML.
func encodeTest(t *testing.T, v any) []byte {
	t.Helper()
	b, err := sigsyaml.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

// decodeTest decodes YAML into a JSON value.
func decodeTest(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := sigsyaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return doc
}

// fieldAt walks a decoded document: a string step is a map key, an int a list index, and
// "name=x" picks the list element named x. ok is false when the path is missing.
func fieldAt(v any, steps ...any) (any, bool) {
	cur := v
	for _, s := range steps {
		switch k := s.(type) {
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		case string:
			if name, isName := strings.CutPrefix(k, "name="); isName {
				l, ok := cur.([]any)
				if !ok {
					return nil, false
				}
				found := false
				for _, e := range l {
					if m, ok := e.(map[string]any); ok && m["name"] == name {
						cur, found = e, true
						break
					}
				}
				if !found {
					return nil, false
				}
				continue
			}
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
		}
	}
	return cur, true
}

// setFieldAt sets a value in a decoded document at an existing parent path (see fieldAt).
func setFieldAt(t *testing.T, doc map[string]any, value any, steps ...any) {
	t.Helper()
	parent, ok := fieldAt(doc, steps[:len(steps)-1]...)
	if !ok {
		t.Fatalf("no field %v in %v", steps[:len(steps)-1], doc)
	}
	switch k := steps[len(steps)-1].(type) {
	case string:
		m, ok := parent.(map[string]any)
		if !ok {
			t.Fatalf("%v is not a map", steps[:len(steps)-1])
		}
		m[k] = value
	case int:
		l, ok := parent.([]any)
		if !ok || k >= len(l) {
			t.Fatalf("%v has no element %d", steps[:len(steps)-1], k)
		}
		l[k] = value
	}
}

// editOf returns the edit of a folder-relative path among edits.
func editOf(t *testing.T, edits []layout.FileEdit, p string) []byte {
	t.Helper()
	for _, e := range edits {
		if e.Path == p {
			return e.Content
		}
	}
	t.Fatalf("no edit of %s; the edits are %v", p, editPaths(edits))
	return nil
}

// editPaths lists the paths edits write, for messages.
func editPaths(edits []layout.FileEdit) []string {
	var paths []string
	for _, e := range edits {
		paths = append(paths, e.Path)
	}
	return paths
}

// parseKust decodes a kustomization's content with kustomize's own types.
func parseKust(t *testing.T, content []byte) types.Kustomization {
	t.Helper()
	var k types.Kustomization
	if err := sigsyaml.Unmarshal(content, &k); err != nil {
		t.Fatalf("decode kustomization %q: %v", content, err)
	}
	return k
}

// replaceDocument returns the content of a multi-document file with the document of
// identity id replaced by doc (nil removes it).
func replaceDocument(t *testing.T, content []byte, id layout.Identity, doc []byte) []byte {
	t.Helper()
	docs, err := objectDocs(content)
	if err != nil {
		t.Fatalf("read documents: %v", err)
	}
	var out []string
	found := false
	for _, d := range docs {
		did, err := identityOf(d)
		if err != nil {
			t.Fatalf("a document without identity: %v", err)
		}
		if did == id {
			found = true
			if doc != nil {
				out = append(out, string(doc))
			}
			continue
		}
		out = append(out, string(encodeTest(t, d)))
	}
	if !found {
		t.Fatalf("no document %s in the file:\n%s", id, content)
	}
	return []byte(strings.Join(out, "---\n"))
}

// writeEdits turns a Write into the file edits of the folder: its document into its
// source file as the folder holds it now (after any earlier Apply), then its own edits.
func writeEdits(t *testing.T, f *Folder, w Write) []layout.FileEdit {
	t.Helper()
	var edits []layout.FileEdit
	if w.Doc != nil || w.Delete {
		if w.Source == "" {
			t.Fatalf("the write changes a document outside the folder: %+v", w)
		}
		doc := w.Doc
		if w.Delete {
			doc = nil
		}
		current := f.files[tree.Join(f.prefix, w.Source)]
		edits = append(edits, layout.FileEdit{Path: w.Source, Content: replaceDocument(t, current, w.SourceID, doc)})
	}
	return append(edits, w.Edits...)
}

// applyWrite applies a Write to the folder, as the worker writes it.
func applyWrite(t *testing.T, f *Folder, w Write) {
	t.Helper()
	if err := f.Apply(writeEdits(t, f, w)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

// sourceFormAndApply runs SourceForm on a live document and applies the result to the
// folder, failing the test when SourceForm refuses.
func sourceFormAndApply(t *testing.T, f *Folder, id layout.Identity, live []byte) Write {
	t.Helper()
	w, err := f.SourceForm(id, live)
	if err != nil {
		t.Fatalf("SourceForm(%s): %v", id, err)
	}
	applyWrite(t, f, w)
	return w
}

// writeThrough plays the cluster changing the render of id by edit, writes the change
// into the folder (SourceForm, then Apply) and checks that the folder now renders what the
// cluster holds. It returns the write.
func writeThrough(t *testing.T, f *Folder, id layout.Identity, edit func(doc map[string]any)) Write {
	t.Helper()
	live := liveFrom(t, f, id, edit)
	w := sourceFormAndApply(t, f, id, live)
	wantVerifies(t, f, id, live)
	return w
}

// deleteAndApply runs Delete on an object and applies the result to the folder, failing
// the test when Delete refuses.
func deleteAndApply(t *testing.T, f *Folder, id layout.Identity) Write {
	t.Helper()
	w, err := f.Delete(id)
	if err != nil {
		t.Fatalf("Delete(%s): %v", id, err)
	}
	applyWrite(t, f, w)
	return w
}

// applyFile applies one file edit (nil content removes the file) to the folder.
func applyFile(t *testing.T, f *Folder, path string, content []byte) {
	t.Helper()
	if err := f.Apply([]layout.FileEdit{{Path: path, Content: content}}); err != nil {
		t.Fatalf("Apply(%s): %v", path, err)
	}
}

// wantVerifies checks that the folder, as edited, verifies with id expected as live (nil:
// deleted in the cluster).
func wantVerifies(t *testing.T, f *Folder, id layout.Identity, live []byte) {
	t.Helper()
	if err := f.Verify(map[layout.Identity][]byte{id: live}); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// writeRefusedByRender plays the cluster changing the render of id by edit, writes the
// change into the folder, and checks that the verification render refuses it at field. It
// returns the refusal.
func writeRefusedByRender(t *testing.T, f *Folder, id layout.Identity, field string, edit func(doc map[string]any)) *RefusalError {
	t.Helper()
	live := liveFrom(t, f, id, edit)
	sourceFormAndApply(t, f, id, live)
	return wantRefusal(t, f.Verify(map[layout.Identity][]byte{id: live}), CodeRenderRefused, field)
}

// wantRenderRefused checks that err is a refusal of the verification render at field that
// names object.
func wantRenderRefused(t *testing.T, err error, field, object string) {
	t.Helper()
	if r := wantRefusal(t, err, CodeRenderRefused, field); r.Object != object {
		t.Errorf("the refusal names %q, want %q", r.Object, object)
	}
}

// Fixture documents.

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
        args: ["--port", "8080"]
`

const settingsConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: blue
  size: large
`

// envTokenSettings is the settings ConfigMap with its env label a ${ENV} token.
const envTokenSettings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels:\n    env: ${ENV}\ndata:\n  color: blue\n"

var (
	webID      = objectID("apps", "Deployment", "", "web")
	settingsID = objectID("", "ConfigMap", "", "settings")
	// webImage is the path of the web container's image in webDeployment's render.
	webImage = []any{"spec", "template", "spec", "containers", "name=web", "image"}
)

// inNamespace returns id in another namespace.
func inNamespace(id layout.Identity, ns string) layout.Identity {
	id.Namespace = ns
	return id
}
