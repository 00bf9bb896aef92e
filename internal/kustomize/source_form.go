package kustomize

import (
	"fmt"
	"sort"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// Write is the edit of the folder that makes the render of one object equal its live
// state (docs/kustomize.md#the-source-form).
type Write struct {
	// Source is the file of the object's source document, relative to the folder ("" when
	// the document lies outside it); SourceID is the document's identity in that file (its
	// namespace may differ from the live one, the build sets it).
	Source   string
	SourceID layout.Identity
	// Doc is the new source document; nil when the source keeps its bytes.
	Doc []byte
	// Delete asks to remove the source document (Delete only).
	Delete bool
	// Edits change kustomization files (images:, replicas:, patches: entries) and add patch
	// files; paths are relative to the folder.
	Edits []layout.FileEdit
}

// Empty reports a write that changes nothing.
func (w Write) Empty() bool { return w.Doc == nil && !w.Delete && len(w.Edits) == 0 }

// SourceForm decides how the folder must change so that the object id renders as live:
// where live and the render agree the source keeps its bytes; where they differ, the
// difference goes to the images:/replicas: entry that supplies the field, or into the
// source document. live should already be reduced against the render
// (docs/sanitize.md#server-defaults-are-not-edits).
func (f *Folder) SourceForm(id layout.Identity, live []byte) (Write, error) {
	if err := f.current(); err != nil {
		return Write{}, err
	}
	obj, ok := f.objects[id]
	if !ok {
		return Write{}, fmt.Errorf("%s is not rendered by the folder", id)
	}
	l, err := decodeDoc(live)
	if err != nil {
		return Write{}, fmt.Errorf("%s: live document: %w", id, err)
	}
	lv, err := normalize(l)
	if err != nil {
		return Write{}, fmt.Errorf("%s: live document: %w", id, err)
	}
	L, _ := lv.(map[string]any)
	if equal(obj.doc, L) {
		return Write{}, nil
	}
	if obj.roots > 1 {
		return Write{}, refuse(CodeFanIn, id.String(), "", "%d render roots of the folder produce it; no single source can be edited", obj.roots)
	}
	src, err := f.sourceOf(obj)
	if err != nil {
		return Write{}, err
	}
	routed := clone(L).(map[string]any)
	changes, err := f.routeEntries(obj, src, L, routed)
	if err != nil {
		return Write{}, err
	}
	newS, err := project(src.doc, obj.doc, routed, nil, id.String())
	if err != nil {
		return Write{}, err
	}
	w := Write{SourceID: src.id}
	if src.writable {
		w.Source = relTo(f.prefix, src.path)
	}
	if !equal(newS, src.doc) {
		field := firstDifference(src.doc, newS, nil)
		if !src.writable {
			return Write{}, refuse(CodeEscapesScope, id.String(), field, "the field comes from %s, outside the target's folder; change it there", src.path)
		}
		if n := len(f.reach[src.path]); n > 1 {
			return Write{}, refuse(CodeFanIn, id.String(), field, "%s is read by %d render roots; an edit there would change them all", src.path, n)
		}
		if w.Doc, err = encodeDoc(newS); err != nil {
			return Write{}, fmt.Errorf("%s: %w", id, err)
		}
	}
	if w.Edits, err = f.entryEdits(id, changes); err != nil {
		return Write{}, err
	}
	return w, nil
}

// routeEntries finds the fields an images: or replicas: entry supplies and the live object
// changed, decides the entry changes, and puts the rendered values back into routed so that
// the projection leaves those fields alone. A base document outside the folder gets new
// entries in the object's render root instead of edits it cannot take.
func (f *Folder) routeEntries(obj *rendered, src source, live, routed map[string]any) ([]entryChange, error) {
	var changes []entryChange
	attributed := map[string]bool{}
	for _, img := range obj.prov.images {
		attributed[img.path.String()] = true
		rv, _ := get(obj.doc, img.path)
		lv, ok := get(live, img.path)
		if !ok || equal(rv, lv) {
			continue
		}
		image, ok := lv.(string)
		if !ok {
			return nil, refuse(CodeUnplaceable, obj.id.String(), img.path.String(), "the live image is not a string")
		}
		c := entryChange{kust: img.entry.kust, index: img.entry.index, field: "images", image: image}
		if !f.kusts[img.entry.kust].writable {
			c.kust, c.index, c.match = obj.root, -1, imageName(rv)
		}
		changes = append(changes, c)
		set(routed, img.path, clone(rv))
	}
	if !src.writable {
		// Images the base document itself sets: a new entry in the overlay.
		walkScalars(obj.doc, nil, func(p fieldPath, rv any) {
			if attributed[p.String()] || len(p) == 0 || p[len(p)-1].list || p[len(p)-1].key != "image" {
				return
			}
			lv, ok := get(live, p)
			image, isString := lv.(string)
			if !ok || !isString || equal(rv, lv) {
				return
			}
			changes = append(changes, entryChange{kust: obj.root, index: -1, field: "images", image: image, match: imageName(rv)})
			set(routed, p, clone(rv))
		})
	}
	replicas := fieldPath{{key: "spec"}, {key: "replicas"}}
	rv, inR := get(obj.doc, replicas)
	lv, inL := get(live, replicas)
	if inL && (!inR || !equal(rv, lv)) && (obj.prov.replicas != nil || !src.writable) {
		count, ok := asInt(lv)
		if !ok {
			return nil, refuse(CodeUnplaceable, obj.id.String(), replicas.String(), "the live replica count is not a number")
		}
		c := entryChange{kust: obj.root, index: -1, field: "replicas", count: count, name: obj.id.Name}
		if e := obj.prov.replicas; e != nil && f.kusts[e.kust].writable {
			c.kust, c.index = e.kust, e.index
		}
		changes = append(changes, c)
		if inR {
			set(routed, replicas, clone(rv))
		} else if spec, ok := routed["spec"].(map[string]any); ok {
			delete(spec, "replicas") // the build does not set it: the new entry will
		}
	}
	return changes, nil
}

// imageName is the name part of an image reference.
func imageName(v any) string {
	s, _ := v.(string)
	name, _, _ := splitImage(s)
	return name
}

// entryEdits applies entry changes to the kustomization files, in the folder's current
// state, and returns the file edits.
func (f *Folder) entryEdits(id layout.Identity, changes []entryChange) ([]layout.FileEdit, error) {
	content := map[string][]byte{}
	for _, c := range changes {
		if n := len(f.reach[c.kust]); n > 1 {
			return nil, refuse(CodeFanIn, id.String(), c.field, "%s is read by %d render roots; an edit of its %s would change them all", c.kust, n, c.field)
		}
		before, ok := content[c.kust]
		if !ok {
			before = f.files[c.kust]
		}
		after, err := c.apply(before)
		if err != nil {
			return nil, fmt.Errorf("%s: edit %s of %s: %w", id, c.field, c.kust, err)
		}
		content[c.kust] = after
	}
	paths := make([]string, 0, len(content))
	for p := range content {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var edits []layout.FileEdit
	for _, p := range paths {
		if string(content[p]) != string(f.files[p]) {
			edits = append(edits, layout.FileEdit{Path: relTo(f.prefix, p), Content: content[p]})
		}
	}
	return edits, nil
}
