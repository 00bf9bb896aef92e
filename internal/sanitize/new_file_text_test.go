package sanitize

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// A document without a block sequence is the text of its new file as it is: the branch
// worker writes such a document of a new object without parsing it again
// (layout.PrepareRendered), and the file must be what parsing and rendering it would have
// made. Checked for every tricky string in labels, annotations, data values and data keys.
func TestADocumentIsItsNewFileAsItIs(t *testing.T) {
	for _, v := range trickyValues {
		newFileAsItIs(t, v)
	}
}

// The same, for any string.
func FuzzADocumentIsItsNewFileAsItIs(f *testing.F) {
	for _, v := range trickyValues {
		f.Add(v)
	}
	f.Fuzz(newFileAsItIs)
}

func newFileAsItIs(t *testing.T, s string) {
	if !utf8.ValidString(s) {
		return
	}
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name": "tricky", "namespace": "demo",
			"labels": map[string]any{"l": s}, "annotations": map[string]any{"a": s},
		},
		"data":  map[string]any{"d": s, "key-" + s: "v", s: "as a key"},
		"empty": map[string]any{},
		"list":  []any{"a", s}, // a block sequence: parsed, as a new file holds it at its key's column
	}
	doc, err := Document(obj)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	parsed := written(t, nil, doc)
	id := layout.Identity{Kind: "ConfigMap", Namespace: "demo", Name: "tricky"}
	ix, err := layout.BuildIndex([]tree.File{})
	if err != nil {
		t.Fatal(err)
	}
	cm := layout.TypeInfo{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	edits, err := layout.UpsertPrepared(ix, func(string) ([]byte, bool, error) { return nil, false, nil }, cm,
		layout.PrepareRendered(doc, id), layout.Placement{Default: "{namespace}/configmaps/{name}.yaml"})
	if err != nil || len(edits) != 1 {
		t.Fatalf("%q: %d edits, %v", s, len(edits), err)
	}
	if !bytes.Equal(edits[0].Content, parsed) {
		t.Errorf("%q: the document written as it is:\n%s\nwritten after a parse:\n%s", s, edits[0].Content, parsed)
	}
}
