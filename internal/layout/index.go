package layout

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// Location of a document: file path and index of the document within the file
// (0-based, counting only object documents).
type Location struct {
	// Path is the file, relative to the folder.
	Path string
	// Doc is the position of the document among the file's object documents.
	Doc int
}

// Index maps the identities of the folder's object documents to where they
// live, and records the folder's kustomization files.
type Index struct {
	locations      map[Identity]Location
	files          map[string][]Identity // object documents of each file, in order
	kustomizations map[string]bool
	// context are files kustomize reads that hold no objects of their own (patch files).
	context map[string]bool
	// roots, when set, are the kustomizations a new document is placed beside (the
	// folder's render roots) instead of every kustomization file.
	roots []string
}

// fileEntry is what one file contributes to the index.
type fileEntry struct {
	ids           []Identity
	kustomization bool
}

// BuildIndex indexes every file under the target folder. It refuses the folder
// with an *UnsupportedContentError when a file cannot be understood.
func BuildIndex(files []tree.File) (*Index, error) {
	return BuildIndexWithContext(files, nil)
}

// BuildIndexWithContext is BuildIndex for a kustomize folder: the context files (patch
// files, relative to the folder) are kustomize input, not object documents. The files are
// parsed in parallel and indexed in path order, so the first problem reported is the same
// as one file after another would find.
func BuildIndexWithContext(files []tree.File, context []string) (*Index, error) {
	sorted := make([]tree.File, len(files))
	copy(sorted, files)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })

	ix := &Index{}
	for _, p := range context {
		ix.MarkContext(p)
	}
	entries, errs := parseEntries(sorted, ix.context)
	for i, f := range sorted {
		if err := checkMode(f); err != nil {
			return nil, err
		}
		if !validRelPath(f.Path) {
			return nil, fmt.Errorf("index %q: not a clean relative path inside the folder", f.Path)
		}
		if ix.context[f.Path] {
			continue
		}
		if errs[i] != nil {
			return nil, asUnsupported(f.Path, errs[i])
		}
		if err := ix.add(f.Path, entries[i]); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// parseEntries reads what each file contributes to the index, on every CPU: parsing the
// documents is most of loading a large folder. Context files are skipped.
func parseEntries(files []tree.File, context map[string]bool) ([]fileEntry, []error) {
	entries, errs := make([]fileEntry, len(files)), make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(files))) {
		wg.Go(func() {
			for i := range next {
				entries[i], errs[i] = indexEntry(files[i].Path, nonNil(files[i].Content))
			}
		})
	}
	for i, f := range files {
		if !context[f.Path] {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return entries, errs
}

// Update re-indexes one file after it changed; content nil means the file was
// removed. When the new content cannot be understood the index is left as it
// was and an *UnsupportedContentError is returned.
func (ix *Index) Update(p string, content []byte) error {
	if !validRelPath(p) {
		return fmt.Errorf("index %q: not a clean relative path inside the folder", p)
	}
	ix.init()
	if content == nil || ix.context[p] {
		ix.remove(p)
		return nil
	}
	entry, err := indexEntry(p, content)
	if err != nil {
		return asUnsupported(p, err)
	}
	return ix.add(p, entry)
}

// add puts what file p contributes in place of what it did; a document whose identity
// another file (or this one) holds already leaves the index as it was.
func (ix *Index) add(p string, entry fileEntry) error {
	ix.init()
	for i, id := range entry.ids {
		if other, ok := ix.locations[id]; ok && other.Path != p {
			return &UnsupportedContentError{Path: p, Reason: fmt.Sprintf(
				"%s is also defined in %s; keep only one of the two documents", id, other.Path)}
		}
		for _, prev := range entry.ids[:i] {
			if prev == id {
				return &UnsupportedContentError{Path: p, Reason: fmt.Sprintf(
					"%s is defined twice in this file; keep only one of the two documents", id)}
			}
		}
	}
	ix.remove(p)
	if entry.kustomization {
		ix.kustomizations[p] = true
	}
	if len(entry.ids) > 0 {
		ix.files[p] = entry.ids
		for i, id := range entry.ids {
			ix.locations[id] = Location{Path: p, Doc: i}
		}
	}
	return nil
}

func (ix *Index) init() {
	if ix.locations == nil { // the zero Index is empty and usable
		ix.locations, ix.files, ix.kustomizations = map[Identity]Location{}, map[string][]Identity{}, map[string]bool{}
		ix.context = map[string]bool{}
	}
}

// MarkContext records a kustomize input file that holds no objects (a patch file): it is
// not indexed, and an object document never goes into it.
func (ix *Index) MarkContext(p string) {
	ix.init()
	ix.context[p] = true
	ix.remove(p)
}

// SetRenderRoots names the kustomizations a new document is placed beside: the folder's
// render roots, when the folder's kustomizations include one another.
func (ix *Index) SetRenderRoots(roots []string) {
	ix.roots = append([]string(nil), roots...)
}

// Lookup returns where the document of id lives.
func (ix *Index) Lookup(id Identity) (Location, bool) {
	loc, ok := ix.locations[id]
	return loc, ok
}

// Identities returns every indexed identity, sorted by String() (each written once: a
// folder of 50,000 documents spent a quarter of a second writing them for the sort).
func (ix *Index) Identities() []Identity {
	type keyed struct {
		key string
		id  Identity
	}
	all := make([]keyed, 0, len(ix.locations))
	for id := range ix.locations {
		all = append(all, keyed{id.String(), id})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	ids := make([]Identity, len(all))
	for i, k := range all {
		ids[i] = k.id
	}
	return ids
}

// Len returns the number of indexed object documents.
func (ix *Index) Len() int { return len(ix.locations) }

// placementKustomizations are the kustomizations a new document may be placed beside.
func (ix *Index) placementKustomizations() []string {
	if ix.roots != nil {
		return ix.roots
	}
	return ix.kustomizationPaths()
}

// kustomizationPaths returns the folder's kustomization files, sorted.
func (ix *Index) kustomizationPaths() []string {
	ps := make([]string, 0, len(ix.kustomizations))
	for p := range ix.kustomizations {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

func (ix *Index) remove(p string) {
	for _, id := range ix.files[p] {
		if loc, ok := ix.locations[id]; ok && loc.Path == p {
			delete(ix.locations, id)
		}
	}
	delete(ix.files, p)
	delete(ix.kustomizations, p)
}

// checkMode refuses links and submodules.
func checkMode(f tree.File) error {
	switch f.Mode {
	case tree.ModeSymlink:
		return &UnsupportedContentError{Path: f.Path, Reason: "is a symbolic link; replace it with a regular file or remove it"}
	case tree.ModeSubmodule:
		return &UnsupportedContentError{Path: f.Path, Reason: "is a Git submodule; remove it from the folder"}
	}
	return nil
}

// indexEntry reads what one file contributes to the index.
func indexEntry(p string, content []byte) (fileEntry, error) {
	switch classify(p) {
	case classIgnored:
		return fileEntry{}, nil
	case classKustomization:
		if err := checkKustomization(content); err != nil {
			return fileEntry{}, err
		}
		return fileEntry{kustomization: true}, nil
	case classObjects:
		if ids, ok := scanIdentities(content); ok {
			return fileEntry{ids: ids}, nil
		}
		pf, err := parseObjects(content)
		if err != nil {
			return fileEntry{}, err
		}
		ids := make([]Identity, len(pf.docs))
		for i, d := range pf.docs {
			ids[i] = d.id
		}
		return fileEntry{ids: ids}, nil
	}
	return fileEntry{}, problemf("not a YAML file; remove it or move it out of the folder")
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
