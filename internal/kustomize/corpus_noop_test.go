package kustomize

import "testing"

// docs/kustomize.md#an-in-sync-folder-writes-nothing: when the cluster holds exactly what a
// folder renders, the source form of every rendered object is the folder as it is: no
// document to write and no file edit. The render itself stands in for the live object.
func TestAnInSyncFolderIsANoOp(t *testing.T) {
	checked := 0
	for _, l := range loadCorpus(t) {
		t.Run(l.Name, func(t *testing.T) {
			f, err := Load(l.Files, l.Target, l.FolderPaths())
			if err != nil {
				t.Fatalf("Load(%s): %v", l.Target, err)
			}
			if f == nil {
				t.Fatalf("Load(%s) found no kustomization", l.Target)
			}
			objects := f.Objects()
			if len(objects) == 0 {
				t.Fatalf("%s renders no objects", l.Target)
			}
			for _, obj := range objects {
				if obj.ID.Namespace != l.Namespace {
					t.Errorf("%s renders in namespace %q, want %q", obj.ID, obj.ID.Namespace, l.Namespace)
				}
				w, err := f.SourceForm(obj.ID, obj.Doc)
				if err != nil {
					t.Errorf("SourceForm(%s): %v", obj.ID, err)
					continue
				}
				if w.Doc != nil {
					t.Errorf("SourceForm(%s) writes a document to %q:\n%s", obj.ID, w.Source, w.Doc)
				}
				for _, e := range w.Edits {
					t.Errorf("SourceForm(%s) edits %s:\n%s", obj.ID, e.Path, e.Content)
				}
				checked++
			}
		})
	}
	t.Logf("checked %d rendered documents", checked)
}
