package sanitize

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// -update rewrites the captured files under testdata: the live objects (e2e run) and the
// golden documents (unit run).
var update = flag.Bool("update", false, "rewrite the captured fixtures and golden files in testdata")

// fixtures names the captured objects, in the order the e2e capture creates them (the
// custom resource needs its definition; the ConfigMap's owner is the Deployment).
var fixtures = []string{
	"crd", "widget", "deployment", "service", "service-nodeport", "service-headless",
	"configmap", "secret", "pvc", "role", "clusterrole", "rolebinding",
}

// dryRunFixtures are the fixtures whose dry-run update of their own source is captured too,
// for the Reduce tables.
var dryRunFixtures = []string{"deployment", "service"}

func testdata(name string) string { return filepath.Join("testdata", name) }

// readLive reads a captured live object, decoded as the dynamic client decodes it.
func readLive(t *testing.T, name string) map[string]any {
	t.Helper()
	return readJSON(t, name+".live.json")
}

func readJSON(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(testdata(file))
	if err != nil {
		t.Fatalf("read fixture (capture it with the e2e test and -update): %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	return u.Object
}

func readSource(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(testdata(name + ".source.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := Parse(data)
	if err != nil {
		t.Fatalf("parse %s source: %v", name, err)
	}
	return obj
}

func writeJSON(t *testing.T, file string, obj map[string]any) {
	t.Helper()
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(testdata(file), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustDocument(t *testing.T, obj map[string]any) []byte {
	t.Helper()
	out, err := Document(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lookup follows a path of map keys and list indexes (ints).
func lookup(obj any, path ...any) (any, bool) {
	cur := obj
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		}
	}
	return cur, true
}

// watchedShape is the shape the watch learns of u: Render's.
func watchedShape(t *testing.T, u *unstructured.Unstructured) Shape {
	t.Helper()
	r, err := Render(&unstructured.Unstructured{Object: copyValue(u.Object).(map[string]any)})
	if err != nil {
		t.Fatal(err)
	}
	return r.Shape
}
