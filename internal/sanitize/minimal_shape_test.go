package sanitize

import (
	"bytes"
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The shape the watch learns from the object it decoded is the one MinimalDocument learns
// from the document parsed again: otherwise no object would ever be known by it.
func TestTheWatchedShapeIsTheShapeOfTheParsedDocument(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: readLive(t, name)}
			rendered, err := Render(u)
			if err != nil {
				t.Fatal(err)
			}
			parsedDoc, err := Parse(rendered.Doc)
			if err != nil {
				t.Fatal(err)
			}
			if _, got := skeletonOf(Clean(parsedDoc)); got != rendered.Shape {
				t.Fatalf("the watch's shape differs from the parsed document's:\n%s", rendered.Doc)
			}
		})
	}
}

// Objects differ in shape by their maps and named list elements, not by their values.
func TestObjectsOfOneShapeShareItAndOthersDoNot(t *testing.T) {
	shape := func(doc string) Shape {
		obj, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return ShapeOf(Clean(obj))
	}
	a := shape("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: y}\ndata:\n  k: v\n")
	b := shape("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  other: value\n")
	if a != b {
		t.Error("two ConfigMaps with data of scalars have different shapes")
	}
	if c := shape("apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata:\n  k: dg==\n"); c == a {
		t.Error("a Secret has a ConfigMap's shape")
	}
	one := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: x\n"
	two := one + "      - name: sidecar\n        image: y\n"
	if shape(one) == shape(two) {
		t.Error("Deployments with one and two containers share a shape")
	}
	service := func(clusterIP string) string {
		return "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  clusterIP: " + clusterIP +
			"\n  ports:\n  - name: http\n    port: 80\n"
	}
	if shape(service("None")) == shape(service("10.96.0.10")) {
		t.Error("a headless Service shares its shape with one the server gave a cluster IP (an update keeps either)")
	}
}

// An object whose shape is known to have nothing to omit is written as its live document
// without the document being parsed: a first mirror of many objects of one shape parses
// none of them a second time.
func TestAKnownShapeWritesTheLiveDocumentWithoutParsingIt(t *testing.T) {
	d := NewDefaulter(nil) // no server: any question would fail
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	known := ShapeOf(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}})
	d.shapes.put(gvr, known, shapeKnowledge{nothingToOmit: true})

	unparsable := []byte("data: [this is not read\n")
	got, err := d.MinimalDocument(context.Background(), gvr, unparsable, known)
	if err != nil || !bytes.Equal(got, unparsable) {
		t.Fatalf("a document of a known shape: got %q, %v; want it back as it is", got, err)
	}
	if _, err := d.MinimalDocument(context.Background(), gvr, unparsable, Shape{}); err == nil {
		t.Fatal("without a shape the document is parsed, and this one cannot be")
	}
	other := ShapeOf(map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"k": "v"}})
	if _, err := d.MinimalDocument(context.Background(), gvr, unparsable, other); err == nil {
		t.Fatal("a shape not known yet is learned from the parsed document, and this one cannot be parsed")
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if _, err := d.MinimalDocument(context.Background(), secrets, unparsable, known); err == nil {
		t.Fatal("a shape is known per resource type: another type's document is parsed")
	}
}
