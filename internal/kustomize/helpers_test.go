package kustomize

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
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
	var doc map[string]any
	if err := sigsyaml.Unmarshal(obj.Doc, &doc); err != nil {
		t.Fatalf("decode the render of %s: %v", id, err)
	}
	return doc
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
	var paths []string
	for _, e := range edits {
		paths = append(paths, e.Path)
	}
	t.Fatalf("no edit of %s; the edits are %v", p, paths)
	return nil
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
// source file (read from files, which are repository paths), then its own edits.
func writeEdits(t *testing.T, files map[string]string, prefix string, w Write) []layout.FileEdit {
	t.Helper()
	var edits []layout.FileEdit
	if w.Doc != nil || w.Delete {
		if w.Source == "" {
			t.Fatalf("the write changes a document outside the folder: %+v", w)
		}
		p := w.Source
		if prefix != "" {
			p = prefix + "/" + w.Source
		}
		doc := w.Doc
		if w.Delete {
			doc = nil
		}
		edits = append(edits, layout.FileEdit{Path: w.Source, Content: replaceDocument(t, []byte(files[p]), w.SourceID, doc)})
	}
	return append(edits, w.Edits...)
}

// sourceFormAndApply runs SourceForm on a live document and applies the result to the
// folder, failing the test when SourceForm refuses.
func sourceFormAndApply(t *testing.T, f *Folder, files map[string]string, prefix string, id layout.Identity, live []byte) Write {
	t.Helper()
	w, err := f.SourceForm(id, live)
	if err != nil {
		t.Fatalf("SourceForm(%s): %v", id, err)
	}
	if err := f.Apply(writeEdits(t, files, prefix, w)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return w
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

var (
	webID      = objectID("apps", "Deployment", "", "web")
	settingsID = objectID("", "ConfigMap", "", "settings")
)

// inNamespace returns id in another namespace.
func inNamespace(id layout.Identity, ns string) layout.Identity {
	id.Namespace = ns
	return id
}
