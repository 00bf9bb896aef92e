package kustomize

import (
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// Folder is the kustomize view of one target folder: its render roots, what they render,
// and where each rendered field comes from. It keeps the files the renders read, with the
// edits of the batch being planned laid over them (Apply).
type Folder struct {
	prefix string
	files  MapFiles
	// kusts are the parsed kustomizations the roots read, by repository path.
	kusts map[string]*kustomization
	// roots are the render roots: the folder's kustomizations no other one includes.
	roots []string
	// reach lists, for every file a render reads, the roots that read it.
	reach map[string][]string
	// resourceFiles are the files listed under resources: (object documents).
	resourceFiles map[string]bool
	// objects are the rendered objects of the current files, with their provenance;
	// stale is set when Apply changed the files since they were rendered.
	objects map[layout.Identity]*rendered
	order   []layout.Identity
	stale   bool
	// baseline is the render at Load: what Verify compares the objects a batch did not
	// edit with.
	baseline      map[layout.Identity]map[string]any
	baselineOrder []layout.Identity
}

// Load reads the kustomizations of the target folder prefix ("" for the repository root)
// and renders each render root. folderPaths are the folder's files, relative to it. It
// returns nil, nil when the folder holds no kustomization, an *UnsupportedError when a
// kustomization uses a feature the writer does not model or does not build.
func Load(files Files, prefix string, folderPaths []string) (*Folder, error) {
	f := &Folder{prefix: prefix, files: MapFiles{}, kusts: map[string]*kustomization{},
		reach: map[string][]string{}, resourceFiles: map[string]bool{}}
	var inFolder []string
	for _, rel := range folderPaths {
		if layout.IsKustomizationFile(rel) {
			inFolder = append(inFolder, tree.Join(prefix, rel))
		}
	}
	if len(inFolder) == 0 {
		return nil, nil
	}
	sort.Strings(inFolder)
	l := loader{f: f, src: files}
	included := map[string]bool{}
	for _, p := range inFolder {
		if err := l.load(p, nil); err != nil {
			return nil, err
		}
	}
	for _, k := range f.kusts {
		for _, child := range l.children[k.path] {
			included[child] = true
		}
	}
	for _, p := range inFolder {
		if !included[p] {
			f.roots = append(f.roots, p)
		}
	}
	if len(f.roots) == 0 {
		return nil, &UnsupportedError{Path: inFolder[0], Feature: "cyclic kustomizations", Hint: "every kustomization of the folder is included by another; break the cycle"}
	}
	for _, root := range f.roots {
		l.markReach(root, root, map[string]bool{})
	}
	if err := f.renderAll(); err != nil {
		return nil, err
	}
	f.baseline, f.baselineOrder = map[layout.Identity]map[string]any{}, f.order
	for id, obj := range f.objects {
		f.baseline[id] = obj.doc
	}
	return f, nil
}

// loader reads kustomizations and the files they list, once each.
type loader struct {
	f        *Folder
	src      Files
	children map[string][]string // kustomization -> included kustomizations
	leaves   map[string][]string // kustomization -> resource and patch files
}

// load reads the kustomization at p and everything it lists. stack detects cycles.
func (l *loader) load(p string, stack []string) error {
	if l.children == nil {
		l.children, l.leaves = map[string][]string{}, map[string][]string{}
	}
	for _, s := range stack {
		if s == p {
			return &UnsupportedError{Path: p, Feature: "cyclic kustomizations", Hint: "a kustomization includes itself"}
		}
	}
	if _, done := l.f.kusts[p]; done {
		return nil
	}
	content, err := l.read(p)
	if err != nil {
		return err
	}
	k, err := parseKustomization(p, content, inFolder(l.f.prefix, p))
	if err != nil {
		return err
	}
	l.f.kusts[p] = k
	for _, entry := range k.resources {
		target, ok := repoJoin(k.dir, entry)
		if !ok {
			return &UnsupportedError{Path: p, Feature: "resources outside the repository", Hint: fmt.Sprintf("entry %q leaves the repository", entry)}
		}
		if child, found, err := l.kustomizationIn(target); err != nil {
			return err
		} else if found {
			l.children[p] = append(l.children[p], child)
			if err := l.load(child, append(stack, p)); err != nil {
				return err
			}
			continue
		}
		if _, err := l.read(target); errors.Is(err, errMissing) {
			return &UnsupportedError{Path: p, Feature: "missing resource", Hint: fmt.Sprintf("resources entry %q is neither a file nor a folder with a kustomization", entry)}
		} else if err != nil {
			return err // a read that failed, or a file over a bound: said as it is
		}
		l.leaves[p] = append(l.leaves[p], target)
		l.f.resourceFiles[target] = true
	}
	for _, patch := range k.patches {
		if _, err := l.read(patch); errors.Is(err, errMissing) {
			return &UnsupportedError{Path: p, Feature: "missing patch", Hint: fmt.Sprintf("patch file %s does not exist", patch)}
		} else if err != nil {
			return err
		}
		l.leaves[p] = append(l.leaves[p], patch)
	}
	return nil
}

// kustomizationIn finds the kustomization file of directory dir, if dir is one.
func (l *loader) kustomizationIn(dir string) (string, bool, error) {
	for _, name := range layout.KustomizationNames {
		p := path.Join(dir, name)
		if dir == "" {
			p = name
		}
		if _, ok := l.f.files[p]; ok {
			return p, true, nil
		}
		content, ok, err := l.src.ReadFile(p)
		if err != nil {
			return "", false, fmt.Errorf("read %s: %w", p, err)
		}
		if ok {
			l.f.files[p] = content
			return p, true, nil
		}
	}
	return "", false, nil
}

// read reads a file into the folder's set.
func (l *loader) read(p string) ([]byte, error) {
	if c, ok := l.f.files[p]; ok {
		return c, nil
	}
	content, ok, err := l.src.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, errMissing)
	}
	l.f.files[p] = content
	return content, nil
}

// errMissing is a file a kustomization names that does not exist.
var errMissing = errors.New("does not exist")

// markReach records that root reads kustomization p and everything under it.
func (l *loader) markReach(root, p string, seen map[string]bool) {
	if seen[p] {
		return
	}
	seen[p] = true
	l.f.addReach(p, root)
	for _, leaf := range l.leaves[p] {
		l.f.addReach(leaf, root)
	}
	for _, child := range l.children[p] {
		l.markReach(root, child, seen)
	}
}

func (f *Folder) addReach(p, root string) {
	for _, r := range f.reach[p] {
		if r == root {
			return
		}
	}
	f.reach[p] = append(f.reach[p], root)
}

// ContextFiles returns the folder's strategic-merge patch files, relative to the folder:
// kustomize input that holds no objects of its own.
func (f *Folder) ContextFiles() []string {
	var out []string
	for _, k := range f.kusts {
		for _, patch := range k.patches {
			if inFolder(f.prefix, patch) {
				out = append(out, relTo(f.prefix, patch))
			}
		}
	}
	sort.Strings(out)
	return out
}

// Roots returns the render roots, relative to the folder.
func (f *Folder) Roots() []string {
	out := make([]string, len(f.roots))
	for i, r := range f.roots {
		out[i] = relTo(f.prefix, r)
	}
	return out
}
