package layout

import (
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

func TestReadDocumentReturnsTheSourceTextOfOneDocumentOfAMultiDocumentFile(t *testing.T) {
	files := map[string]string{
		"apps.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n---\n# the second one\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: ns\ndata:\n  k: v\n",
	}
	read := func(p string) ([]byte, bool, error) {
		c, ok := files[p]
		return []byte(c), ok, nil
	}
	ix, err := BuildIndex([]tree.File{{Path: "apps.yaml", Content: []byte(files["apps.yaml"])}})
	if err != nil {
		t.Fatal(err)
	}
	doc, ok, err := ReadDocument(ix, read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "b"})
	if err != nil || !ok {
		t.Fatalf("ReadDocument: ok=%v err=%v", ok, err)
	}
	want := "# the second one\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: ns\ndata:\n  k: v\n"
	if string(doc) != want {
		t.Fatalf("document text:\n%q\nwant\n%q", doc, want)
	}
	if _, ok, _ := ReadDocument(ix, read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "missing"}); ok {
		t.Fatal("a missing identity was found")
	}
}
