package layout

import (
	"fmt"
	"path"
)

// Delete removes the document of id. Returns nil edits when it is not in the folder.
//
// Deleting the last object document of a file deletes the file and removes
// its entry from the resources of every kustomization of the folder that lists it.
// Deleting one document of several removes that document and its separator
// line; the other documents stay byte-identical. Delete does not change ix.
func Delete(ix *Index, read ReadFile, id Identity) ([]FileEdit, error) {
	loc, ok := ix.Lookup(id)
	if !ok {
		return nil, nil
	}
	pf, d, err := locate(read, loc, id)
	if err != nil {
		return nil, err
	}
	if len(pf.docs) == 1 {
		return deleteFile(ix, read, loc.Path)
	}
	segs := pf.text.segs
	i := d.seg
	if segs[i].sep == "" && i+1 < len(segs) {
		// The first document has no separator of its own: drop the one
		// after it, so the next document starts the file.
		segs[i+1].sep = ""
	}
	pf.text.segs = append(segs[:i:i], segs[i+1:]...)
	return []FileEdit{{Path: loc.Path, Content: pf.text.join()}}, nil
}

// deleteFile deletes a file and its entries in the resources of every kustomization of the
// folder that lists it, beside it or in a folder above ("extra/notes.yaml").
func deleteFile(ix *Index, read ReadFile, p string) ([]FileEdit, error) {
	edits := []FileEdit{{Path: p}}
	for _, k := range ix.kustomizationPaths() {
		content, err := readExisting(read, k)
		if err != nil {
			return nil, err
		}
		updated, changed, err := removeResource(content, path.Dir(k), p)
		if err != nil {
			return nil, fmt.Errorf("edit %s: %w", k, asUnsupported(k, err))
		}
		if changed {
			edits = append(edits, FileEdit{Path: k, Content: updated})
		}
	}
	return edits, nil
}
