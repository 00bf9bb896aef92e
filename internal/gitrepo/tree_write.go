package gitrepo

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// Change sets one file of the tree to Content, or removes it when Delete is set.
type Change struct {
	Path    string
	Content []byte
	Delete  bool
}

// Signature is a Git identity with a time.
type Signature struct {
	Name, Email string
	When        time.Time
}

// CommitSpec describes a commit to build.
type CommitSpec struct {
	Author, Committer Signature
	Message           string
	// Signer, when set, signs the commit (docs/branch-worker.md#commits).
	Signer *CommitSigner
}

// ErrNothingToCommit is returned when the changes leave the tree as it was.
var ErrNothingToCommit = errors.New("the changes leave the tree unchanged")

// Commit builds a commit on parent ("" for the first commit of a branch) with the changes
// applied to parent's tree, and returns its ID. Only the trees on the changed paths are
// rewritten. It returns ErrNothingToCommit when the tree would not change.
func (r *Repo) Commit(parent string, changes []Change, spec CommitSpec) (string, error) {
	root, err := r.rootTree(parent)
	if err != nil {
		return "", err
	}
	var base plumbing.Hash
	if root != nil {
		base = root.Hash
	}
	edits := map[string]*Change{}
	folders := map[string]bool{} // the folders above the changed files, each tree rewritten
	for i := range changes {
		c := &changes[i]
		if err := checkPath(c.Path); err != nil {
			return "", err
		}
		edits[c.Path] = c
		for p := c.Path; strings.Contains(p, "/"); {
			p = p[:strings.LastIndexByte(p, '/')]
			if folders[p] {
				break
			}
			folders[p] = true
		}
	}
	// A blob per change, a tree per folder above them, the root tree and the commit.
	objs := r.newObjectBatch(len(changes) + len(folders) + 2)
	tree, err := r.editTree(objs, base, edits)
	if err != nil {
		return "", err
	}
	if tree == base && parent != "" {
		return "", ErrNothingToCommit
	}
	if tree.IsZero() {
		if tree, err = writeTree(objs, nil); err != nil {
			return "", err
		}
	}
	c := &object.Commit{
		Author:    object.Signature(spec.Author),
		Committer: object.Signature(spec.Committer),
		Message:   spec.Message,
		TreeHash:  tree,
	}
	if parent != "" {
		c.ParentHashes = []plumbing.Hash{plumbing.NewHash(parent)}
	}
	if spec.Signer != nil {
		if err := spec.Signer.sign(r, c); err != nil {
			return "", err
		}
	}
	h, err := objs.storeEncoded(len(c.Message)+len(c.Signature)+1024, c.Encode)
	if err != nil {
		return "", fmt.Errorf("encode commit: %w", err)
	}
	if err := r.writePack(objs); err != nil {
		return "", err
	}
	return h.String(), nil
}

func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("path %q is not a clean relative file path", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || tree.GitDir(seg) {
			return fmt.Errorf("path %q has a forbidden segment %q", p, seg)
		}
	}
	return nil
}

// editTree applies edits (keyed by path relative to this tree) to the tree base (zero for
// none) and returns the new tree's hash; zero means the tree became empty.
func (r *Repo) editTree(objs *objectBatch, base plumbing.Hash, edits map[string]*Change) (plumbing.Hash, error) {
	entries := map[string]object.TreeEntry{}
	if !base.IsZero() {
		t, err := r.cachedTreeOf(base)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", base, err)
		}
		for _, e := range t.tree.Entries {
			entries[e.Name] = e
		}
	}
	sub := map[string]map[string]*Change{}
	for p, c := range edits {
		head, rest, nested := strings.Cut(p, "/")
		if !nested {
			if err := editEntry(objs, entries, head, c); err != nil {
				return plumbing.ZeroHash, err
			}
			continue
		}
		if sub[head] == nil {
			sub[head] = map[string]*Change{}
		}
		sub[head][rest] = c
	}
	for dir, childEdits := range sub {
		var childBase plumbing.Hash
		if e, ok := entries[dir]; ok && e.Mode == filemode.Dir {
			childBase = e.Hash
		} else if ok && !allDeletes(childEdits) {
			return plumbing.ZeroHash, fmt.Errorf("cannot write below %s: it is a file", dir)
		}
		h, err := r.editTree(objs, childBase, childEdits)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if h.IsZero() {
			if e, ok := entries[dir]; ok && e.Mode == filemode.Dir {
				delete(entries, dir)
			}
			continue
		}
		entries[dir] = object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: h}
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	return writeTree(objs, list)
}

func allDeletes(edits map[string]*Change) bool {
	for _, c := range edits {
		if !c.Delete {
			return false
		}
	}
	return true
}

func editEntry(objs *objectBatch, entries map[string]object.TreeEntry, name string, c *Change) error {
	if c.Delete {
		if e, ok := entries[name]; ok && e.Mode != filemode.Dir {
			delete(entries, name)
		}
		return nil
	}
	if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
		return fmt.Errorf("cannot write file %s: a folder has that name", c.Path)
	}
	h, err := objs.storeBlob(c.Content)
	if err != nil {
		return fmt.Errorf("store %s: %w", c.Path, err)
	}
	mode := filemode.Regular
	if e, ok := entries[name]; ok && e.Mode == filemode.Executable {
		mode = filemode.Executable // an edit keeps a foreign file's executable bit
	}
	entries[name] = object.TreeEntry{Name: name, Mode: mode, Hash: h}
	return nil
}

func writeTree(objs *objectBatch, entries []object.TreeEntry) (plumbing.Hash, error) {
	sort.Sort(object.TreeEntrySorter(entries))
	t := &object.Tree{Entries: entries}
	size := 0
	for _, e := range entries {
		size += len(e.Name) + len("100644 \x00") + e.Hash.Size()
	}
	h, err := objs.storeEncoded(size, t.Encode)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	return h, nil
}
