package kustomize

import (
	"fmt"
	"sort"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// Apply lays file edits (relative to the folder, nil content = deleted) over the folder's
// files, so that the next decisions and Verify see them.
func (f *Folder) Apply(edits []layout.FileEdit) error {
	for _, e := range edits {
		f.stale = true
		p := tree.Join(f.prefix, e.Path)
		if e.Content == nil {
			delete(f.files, p)
			continue
		}
		f.files[p] = e.Content
		if k, ok := f.kusts[p]; ok {
			parsed, err := parseKustomization(p, e.Content, k.writable)
			if err != nil {
				return err
			}
			f.kusts[p] = parsed
			f.noteEntries(parsed)
		}
	}
	return nil
}

// noteEntries records the resource files an edited kustomization lists now (a new object's
// file), so that the dye marks them and writes reach them, like the ones Load found.
func (f *Folder) noteEntries(k *kustomization) {
	for _, entry := range k.resources {
		target, ok := repoJoin(k.dir, entry)
		if _, exists := f.files[target]; !ok || !exists || f.resourceFiles[target] {
			continue
		}
		f.resourceFiles[target] = true
		for _, root := range f.reach[k.path] {
			f.addReach(target, root)
		}
	}
	for _, patch := range k.patches {
		for _, root := range f.reach[k.path] {
			f.addReach(patch, root)
		}
	}
}

// Verify renders the folder again with the batch's edits applied
// (docs/kustomize.md#verification-render): every object in expect must render equal to its
// live document (nil: must no longer render), and every other object must render as it did
// before the batch. Otherwise the batch is refused.
func (f *Folder) Verify(expect map[layout.Identity][]byte) error {
	after := map[layout.Identity]map[string]any{}
	for _, root := range f.roots {
		docs, err := renderRoot(f.files, root)
		if err != nil {
			return refuse(CodeRenderRefused, relTo(f.prefix, root), "", "the folder would no longer build: %v", err)
		}
		for _, d := range docs {
			if _, dup := after[d.id]; !dup {
				after[d.id] = d.doc
			}
		}
	}
	ids := make([]layout.Identity, 0, len(expect))
	for id := range expect {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		_, before := f.baseline[id]
		if _, now := after[id]; !before && !now {
			continue // a plain document of the folder that no render root lists
		}
		if err := checkExpected(id, expect[id], after); err != nil {
			return err
		}
	}
	for _, id := range f.baselineOrder {
		if _, edited := expect[id]; edited {
			continue
		}
		got, ok := after[id]
		if !ok {
			return refuse(CodeRenderRefused, id.String(), "", "the batch would remove it from the render, though it did not change")
		}
		if d := firstDifference(f.baseline[id], got, nil); d != "" {
			return refuse(CodeRenderRefused, id.String(), d, "the batch would change it, though it did not change in the cluster")
		}
	}
	for id := range after {
		if _, known := f.baseline[id]; !known {
			if _, edited := expect[id]; !edited {
				return refuse(CodeRenderRefused, id.String(), "", "the batch would add it to the render, though it is not in the cluster")
			}
		}
	}
	return nil
}

func checkExpected(id layout.Identity, want []byte, after map[layout.Identity]map[string]any) error {
	got, rendered := after[id]
	if want == nil {
		if rendered {
			return refuse(CodeRenderRefused, id.String(), "", "it was deleted in the cluster, but the folder would still render it")
		}
		return nil
	}
	if !rendered {
		return refuse(CodeRenderRefused, id.String(), "", "the folder would not render it; list its file under resources:")
	}
	w, err := decodeDoc(want)
	if err != nil {
		return fmt.Errorf("%s: live document: %w", id, err)
	}
	wv, err := normalize(w)
	if err != nil {
		return fmt.Errorf("%s: live document: %w", id, err)
	}
	if d := firstDifference(got, wv, nil); d != "" {
		return refuse(CodeRenderRefused, id.String(), d, "the folder would render a value other than the live one (the build sets this field); change it in the kustomization")
	}
	return nil
}
