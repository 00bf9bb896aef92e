package sanitize

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

func mustParse(t *testing.T, doc string) map[string]any {
	t.Helper()
	obj, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("parse %q: %v", doc, err)
	}
	return Clean(obj)
}

// omitsCases are sources and live objects, and whether the source holds every live field.
var omitsCases = []struct {
	name         string
	source, live string
	omitsNothing bool
}{
	{"a ConfigMap whose value changed", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\ndata: {k: one}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\ndata: {k: two}\n", true},
	{"a field the source lacks", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\ndata: {k: one}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\ndata: {k: one, j: two}\n", false},
	{"a named element with a field the source lacks", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: y, imagePullPolicy: Always}]}\n", false},
	{"a named element the source lacks", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}, {name: d, image: x}]}\n", false},
	{"named elements in another order", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}, {name: d, image: x, tty: true}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: d, image: y, tty: true}, {name: c, image: x}]}\n", true},
	{"an empty list in the source", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}]}\n", false},
	{"unnamed elements by position, one with more", "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {rules: [{a: 1}, {a: 2}]}\n",
		"apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {rules: [{a: 1}, {a: 3, b: 4}]}\n", false},
	{"scalar lists of another length", "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {args: [a, b]}\n",
		"apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {args: [a, b, c]}\n", true},
	{"a map where the source holds a scalar", "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {v: 1}\n",
		"apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {v: {w: 1}}\n", true},
}

// The dry-run is skipped exactly when Reduce could drop nothing: for every case it calls
// safe, Reduce returns live whatever the server's defaults are (live itself as the defaults
// drops the most, the source as the defaults, none at all).
func TestADryRunIsSkippedOnlyWhenNoLiveFieldCanBeADefault(t *testing.T) {
	for _, c := range omitsCases {
		source, live := mustParse(t, c.source), mustParse(t, c.live)
		if got := OmitsNothing(source, live); got != c.omitsNothing {
			t.Errorf("%s: OmitsNothing = %v, want %v", c.name, got, c.omitsNothing)
		}
		if !c.omitsNothing {
			continue
		}
		for _, def := range []map[string]any{live, source, {}} {
			if got := Reduce(source, live, def); !equalValues(got, live) {
				t.Errorf("%s: skipped, but Reduce with defaults %v gives %v, not live", c.name, def, got)
			}
		}
	}
	dep := captured(t, "deployment")
	if OmitsNothing(dep.source, dep.live) {
		t.Error("a live Deployment holds defaults its source omits, yet its dry-run would be skipped")
	}
}

// A ConfigMap edited in the cluster is reduced without a request: the client below reaches
// no server, so a dry-run would fail.
func TestAnEditedConfigMapIsReducedWithoutADryRun(t *testing.T) {
	client, err := dynamic.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDefaulter(client)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	c := omitsCases[0]
	out, err := d.ReduceDocument(context.Background(), gvr, []byte(c.source), []byte(c.live))
	if err != nil {
		t.Fatalf("ReduceDocument asked the server: %v", err)
	}
	if got := mustParse(t, string(out)); !equalValues(got, mustParse(t, c.live)) {
		t.Fatalf("ReduceDocument = %s, want the live document", out)
	}
	c = omitsCases[1]
	if _, err := d.ReduceDocument(context.Background(), gvr, []byte(c.source), []byte(c.live)); err == nil {
		t.Fatal("a live field the source lacks was reduced without asking the server")
	}
}
