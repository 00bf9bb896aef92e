package kustomize

import (
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// rendered is one object the folder renders, with where it comes from.
type rendered struct {
	id   layout.Identity
	root string
	doc  map[string]any
	prov provenance
	// roots counts the render roots that produce this identity; more than one makes the
	// object read-only (fan-in).
	roots int
}

// Object is one rendered object.
type Object struct {
	ID layout.Identity
	// Doc is the rendered document (YAML).
	Doc []byte
	// Root is the render root that produces it, relative to the folder.
	Root string
}

// renderAll renders every root, plain and dyed, and records each object's provenance.
func (f *Folder) renderAll() error {
	d, err := f.dye()
	if err != nil {
		return err
	}
	f.objects, f.order = map[layout.Identity]*rendered{}, nil
	for _, root := range f.roots {
		plain, err := renderRoot(f.files, root)
		if err != nil {
			return &UnsupportedError{Path: root, Feature: "render failed", Hint: err.Error()}
		}
		dyed, err := renderRoot(d.files, root)
		if err != nil {
			return &UnsupportedError{Path: root, Feature: "render failed", Hint: err.Error()}
		}
		dyedByID := map[layout.Identity]map[string]any{}
		for _, r := range dyed {
			dyedByID[r.id] = r.doc
		}
		for _, r := range plain {
			if obj, dup := f.objects[r.id]; dup {
				obj.roots++
				continue
			}
			f.objects[r.id] = &rendered{id: r.id, root: root, doc: r.doc, prov: d.read(dyedByID[r.id]), roots: 1}
			f.order = append(f.order, r.id)
		}
	}
	f.recordSourceIDs()
	f.stale = false
	return nil
}

// current renders the folder again when Apply changed it, so that a second decision in
// one batch compares with what the folder renders now.
func (f *Folder) current() error {
	if !f.stale {
		return nil
	}
	if err := f.renderAll(); err != nil {
		return refuse(CodeRenderRefused, f.Roots()[0], "", "the folder no longer builds with the batch's edits: %v", err)
	}
	return nil
}

// Objects returns every rendered object, root by root in render order.
func (f *Folder) Objects() []Object {
	out := make([]Object, 0, len(f.order))
	for _, id := range f.order {
		if o, ok := f.object(id); ok {
			out = append(out, o)
		}
	}
	return out
}

// Lookup returns the rendered object of a live identity, if the folder renders it, as the
// folder is now (with the edits Apply laid over it).
func (f *Folder) Lookup(id layout.Identity) (Object, bool) {
	if f.current() != nil {
		return Object{}, false
	}
	return f.object(id)
}

func (f *Folder) object(id layout.Identity) (Object, bool) {
	r, ok := f.objects[id]
	if !ok {
		return Object{}, false
	}
	doc, err := encodeDoc(r.doc)
	if err != nil {
		return Object{}, false
	}
	return Object{ID: id, Doc: doc, Root: relTo(f.prefix, r.root)}, true
}

// Identities returns the identities a sweep of the folder sees: every rendered object,
// and every document of the folder the render does not produce (indexed lists the
// folder's document identities as written, which the build may rename into another
// namespace).
func (f *Folder) Identities(indexed []layout.Identity) []layout.Identity {
	_ = f.current() // a folder that no longer builds keeps the identities it had
	sources := map[layout.Identity]bool{}
	for _, obj := range f.objects {
		if inFolder(f.prefix, obj.prov.source) {
			sources[obj.prov.sourceID] = true
		}
	}
	out := append([]layout.Identity(nil), f.order...)
	for _, id := range indexed {
		if _, rendered := f.objects[id]; !rendered && !sources[id] {
			out = append(out, id)
		}
	}
	return out
}
