package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/gitops-reverser/gitops-reverser/internal/bounds"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// rootTree returns the tree of a commit, or nil for the empty commit "".
func (r *Repo) rootTree(commit string) (*object.Tree, error) {
	if commit == "" {
		return nil, nil
	}
	h, err := r.trees.root(r.repo.Storer, plumbing.NewHash(commit))
	if err != nil {
		return nil, err
	}
	t, err := r.cachedTreeOf(h)
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	return t.tree, nil
}

// subtree returns the tree at dir below root (dir "" is root), or nil when absent.
func (r *Repo) subtree(root *object.Tree, dir string) (*object.Tree, error) {
	if root == nil {
		return nil, nil
	}
	t, err := r.cachedFolder(root.Hash, dir)
	if err != nil || t == nil {
		return nil, err
	}
	return t.tree, nil
}

// cachedFolder returns the decoded tree at dir below the tree root (dir "" is root), or
// nil when absent.
func (r *Repo) cachedFolder(root plumbing.Hash, dir string) (*cachedTree, error) {
	t, err := r.cachedTreeOf(root)
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", dir, err)
	}
	if dir == "" {
		return t, nil
	}
	for _, name := range strings.Split(dir, "/") {
		e, ok := t.entry(name)
		if !ok || e.Mode != filemode.Dir {
			return nil, nil
		}
		if t, err = r.cachedTreeOf(e.Hash); err != nil {
			return nil, fmt.Errorf("read folder %s: %w", dir, err)
		}
	}
	return t, nil
}

// folderTree returns the tree of dir ("" = the root) at a commit, nil when the commit (or
// the empty commit "") has no such folder.
func (r *Repo) folderTree(commit, dir string) (*object.Tree, error) {
	root, err := r.rootTree(commit)
	if err != nil {
		return nil, err
	}
	return r.subtree(root, dir)
}

// HasFolder reports whether dir ("" = the root) holds any entry at a commit; a commit
// without the folder, or the empty commit "", answers false.
func (r *Repo) HasFolder(commit, dir string) (bool, error) {
	t, err := r.folderTree(commit, dir)
	if err != nil || t == nil {
		return false, err
	}
	return len(t.Entries) > 0, nil
}

// ReadFiles returns every file below dir ("" = the whole tree) at a commit, with paths
// relative to dir. Many files are read straight from the packs (blob_bulk.go); the rest,
// and every file of a small folder, one by one.
func (r *Repo) ReadFiles(commit, dir string) ([]tree.File, error) {
	t, err := r.folderTree(commit, dir)
	if err != nil || t == nil {
		return nil, err
	}
	var files []tree.File
	var hashes []plumbing.Hash // of each regular file; zero for a symlink or submodule
	walker := object.NewTreeWalker(t, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", dir, err)
		}
		f, ok := fileAt(name, entry)
		if !ok {
			continue
		}
		files = append(files, f)
		if f.Mode == tree.ModeRegular || f.Mode == tree.ModeExecutable {
			hashes = append(hashes, entry.Hash)
		} else {
			hashes = append(hashes, plumbing.ZeroHash)
		}
	}
	if err := r.readContents(dir, files, hashes); err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// readContents fills in the content of each regular file, from its blob.
func (r *Repo) readContents(dir string, files []tree.File, hashes []plumbing.Hash) error {
	var wanted []wantedBlob
	var at []int // the file of each wanted blob
	for i, h := range hashes {
		if !h.IsZero() {
			wanted = append(wanted, wantedBlob{hash: h, content: &files[i].Content})
			at = append(at, i)
		}
	}
	done := make([]bool, len(wanted))
	if len(wanted) >= bulkReadMin {
		var err error
		if done, err = r.readPackedBlobs(wanted); err != nil {
			return fmt.Errorf("read %s: %w", dir, err)
		}
	}
	for k, w := range wanted {
		if done[k] {
			continue
		}
		name := files[at[k]].Path
		content, err := r.blob(name, w.hash)
		var exceeded *bounds.ExceededError
		if errors.As(err, &exceeded) {
			exceeded.Path = path.Join(dir, exceeded.Path) // named by its repository path
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		*w.content = content
	}
	return nil
}

// fileAt is the file of a tree entry, without its content; ok is false for a folder.
func fileAt(name string, entry object.TreeEntry) (tree.File, bool) {
	switch entry.Mode {
	case filemode.Dir:
		return tree.File{}, false
	case filemode.Symlink:
		return tree.File{Path: name, Mode: tree.ModeSymlink}, true
	case filemode.Submodule:
		return tree.File{Path: name, Mode: tree.ModeSubmodule}, true
	case filemode.Executable:
		return tree.File{Path: name, Mode: tree.ModeExecutable}, true
	}
	return tree.File{Path: name, Mode: tree.ModeRegular}, true
}

func (r *Repo) fileOf(name string, entry object.TreeEntry) (tree.File, bool, error) {
	f, ok := fileAt(name, entry)
	if !ok || (f.Mode != tree.ModeRegular && f.Mode != tree.ModeExecutable) {
		return f, ok, nil
	}
	content, err := r.blob(name, entry.Hash)
	if err != nil {
		return tree.File{}, false, fmt.Errorf("read %s: %w", name, err)
	}
	f.Content = content
	return f, true, nil
}

// blob reads the content of file name, refusing one over the size bound before reading it.
func (r *Repo) blob(name string, h plumbing.Hash) ([]byte, error) {
	b, err := object.GetBlob(r.repo.Storer, h)
	if err != nil {
		return nil, err
	}
	if err := bounds.CheckSize(name, b.Size, r.maxFileBytes); err != nil {
		return nil, err
	}
	if b.Size < 0 {
		return nil, fmt.Errorf("blob %s has a negative size", h)
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	content := make([]byte, b.Size)
	if _, err := io.ReadFull(rd, content); err != nil {
		return nil, err
	}
	return content, nil
}

// ReadFile returns the content of one regular file at a commit; ok is false when it does
// not exist (or is a folder, symlink or submodule: see ReadEntry).
func (r *Repo) ReadFile(commit, file string) (content []byte, ok bool, err error) {
	f, ok, err := r.ReadEntry(commit, file)
	if err != nil || !ok || (f.Mode != tree.ModeRegular && f.Mode != tree.ModeExecutable) {
		return nil, false, err
	}
	return f.Content, true, nil
}

// ReadEntry returns one tree entry at a commit with its mode; ok is false when no file
// has that path (a path below a file, "a.yaml/b", included).
func (r *Repo) ReadEntry(commit, file string) (tree.File, bool, error) {
	if err := checkPath(file); err != nil {
		return tree.File{}, false, fmt.Errorf("find %s: %w", file, err)
	}
	root, err := r.rootTree(commit)
	if err != nil || root == nil {
		return tree.File{}, false, err
	}
	dir, name := path.Split(file)
	folder, err := r.cachedFolder(root.Hash, strings.TrimSuffix(dir, "/"))
	if err != nil || folder == nil {
		return tree.File{}, false, err
	}
	entry, ok := folder.entry(name)
	if !ok {
		return tree.File{}, false, nil
	}
	return r.fileOf(file, entry)
}

// ChangedPaths lists the files below dir that differ between two commits, relative to dir.
// Subtrees with equal hashes are skipped, so the cost follows the size of the change.
func (r *Repo) ChangedPaths(from, to, dir string) ([]string, error) {
	fromRoot, err := r.rootTree(from)
	if err != nil {
		return nil, err
	}
	toRoot, err := r.rootTree(to)
	if err != nil {
		return nil, err
	}
	a, err := r.subtree(fromRoot, dir)
	if err != nil {
		return nil, err
	}
	b, err := r.subtree(toRoot, dir)
	if err != nil {
		return nil, err
	}
	var changed []string
	if err := r.diffTrees(a, b, "", &changed); err != nil {
		return nil, err
	}
	sort.Strings(changed)
	return changed, nil
}

func (r *Repo) diffTrees(a, b *object.Tree, prefix string, out *[]string) error {
	if a != nil && b != nil && a.Hash == b.Hash {
		return nil
	}
	entries := map[string][2]*object.TreeEntry{}
	for _, side := range []struct {
		t *object.Tree
		i int
	}{{a, 0}, {b, 1}} {
		if side.t == nil {
			continue
		}
		for i := range side.t.Entries {
			e := &side.t.Entries[i]
			pair := entries[e.Name]
			pair[side.i] = e
			entries[e.Name] = pair
		}
	}
	for name, pair := range entries {
		if pair[0] != nil && pair[1] != nil && pair[0].Hash == pair[1].Hash && pair[0].Mode == pair[1].Mode {
			continue
		}
		full := path.Join(prefix, name)
		subA, err := r.entryTree(pair[0])
		if err != nil {
			return err
		}
		subB, err := r.entryTree(pair[1])
		if err != nil {
			return err
		}
		if subA != nil || subB != nil {
			if err := r.diffTrees(subA, subB, full, out); err != nil {
				return err
			}
		}
		if isFileEntry(pair[0]) || isFileEntry(pair[1]) {
			*out = append(*out, full)
		}
	}
	return nil
}

func isFileEntry(e *object.TreeEntry) bool { return e != nil && e.Mode != filemode.Dir }

func (r *Repo) entryTree(e *object.TreeEntry) (*object.Tree, error) {
	if e == nil || e.Mode != filemode.Dir {
		return nil, nil
	}
	t, err := r.cachedTreeOf(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", e.Name, err)
	}
	return t.tree, nil
}
