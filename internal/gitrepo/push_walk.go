package gitrepo

import (
	"fmt"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/plumbing/revlist"
	"github.com/go-git/go-git/v6/storage/filesystem"
)

// maxPushWalk bounds the commits the push walk follows back from what it sends before it
// hands the question to go-git's own walk.
const maxPushWalk = 10000

// localStorage is the local copy's storage with the walk that finds what a push sends
// replaced (go-git asks a storage that has RevListObjects): go-git marks every object the
// remote's tip reaches before it looks at what is new, a walk over the whole tree at every
// push; this one compares each new commit's tree with its first parent's and skips equal
// subtrees, so its cost follows the size of the change (docs/branch-worker.md#push).
type localStorage struct {
	*filesystem.Storage
	trees *treeCache // the local copy's decoded trees
}

// openLocal opens the bare local copy in dir on a localStorage that reads trees through
// trees.
func openLocal(dir string, trees *treeCache) (*git.Repository, error) {
	plain, err := git.PlainOpen(dir)
	if err != nil {
		return nil, err
	}
	fs, ok := plain.Storer.(*filesystem.Storage)
	if !ok {
		return plain, nil
	}
	return git.Open(localStorage{fs, trees}, nil)
}

// RevListObjects returns the objects reachable from wants that the remote, which holds
// haves, may lack: the commits from wants back to a have, and in each the trees and blobs
// that differ from its first parent's at the same path. An object the remote has anyway
// may be in the list (the remote keeps one copy); none it lacks is left out. When the walk
// cannot tell (a tag, a history that meets no have, one longer than maxPushWalk), go-git's
// own walk answers.
func (s localStorage) RevListObjects(wants, haves []plumbing.Hash) ([]plumbing.Hash, error) {
	out, ok, err := s.newObjects(wants, haves)
	if err != nil {
		return nil, err
	}
	if !ok {
		return revlist.Objects(s.Storage, wants, haves)
	}
	return out, nil
}

func (s localStorage) newObjects(wants, haves []plumbing.Hash) ([]plumbing.Hash, bool, error) {
	have := map[plumbing.Hash]bool{}
	for _, h := range haves {
		if s.HasEncodedObject(h) == nil {
			have[h] = true // a have this copy lacks says nothing about what it sends
		}
	}
	seen := map[plumbing.Hash]bool{}
	var commits []*object.Commit
	queue := append([]plumbing.Hash(nil), wants...)
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if have[h] || seen[h] {
			continue
		}
		seen[h] = true
		o, err := s.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, false, fmt.Errorf("push walk: object %s: %w", h, err)
		}
		if o.Type() != plumbing.CommitObject {
			return nil, false, nil // a tag or another kind of object: go-git's walk
		}
		c, err := object.DecodeCommit(s, o)
		if err != nil {
			return nil, false, fmt.Errorf("push walk: commit %s: %w", h, err)
		}
		if len(c.ParentHashes) == 0 && len(have) > 0 {
			return nil, false, nil // a history that does not meet the remote's
		}
		if commits = append(commits, c); len(commits) > maxPushWalk {
			return nil, false, nil
		}
		queue = append(queue, c.ParentHashes...)
	}
	out := map[plumbing.Hash]bool{}
	compared := map[[2]plumbing.Hash]bool{}
	for _, c := range commits {
		out[c.Hash] = true
		var parentTree plumbing.Hash
		if len(c.ParentHashes) > 0 {
			var err error
			if parentTree, err = s.trees.root(s, c.ParentHashes[0]); err != nil {
				return nil, false, fmt.Errorf("push walk: parent of %s: %w", c.Hash, err)
			}
		}
		if err := s.newInTree(c.TreeHash, parentTree, out, compared); err != nil {
			return nil, false, err
		}
	}
	list := make([]plumbing.Hash, 0, len(out))
	for h := range out {
		list = append(list, h)
	}
	return list, true, nil
}

// newInTree adds to out the tree h and what it holds that the tree old (zero: none) does
// not hold at the same path. Submodule entries name commits of other repositories: never sent.
// A pair already compared is skipped; a tree already in out is not: it may have been compared
// with another tree (an edit undone and made again: the later commit's tree equals an earlier
// one's, compared first with the commit between them), which tells nothing of what it holds
// that old lacks.
func (s localStorage) newInTree(h, old plumbing.Hash, out map[plumbing.Hash]bool, compared map[[2]plumbing.Hash]bool) error {
	if h == old || compared[[2]plumbing.Hash{h, old}] {
		return nil
	}
	compared[[2]plumbing.Hash{h, old}] = true
	out[h] = true
	t, err := s.trees.tree(s, h)
	if err != nil {
		return fmt.Errorf("push walk: tree %s: %w", h, err)
	}
	prevTree := &cachedTree{}
	if !old.IsZero() {
		if prevTree, err = s.trees.tree(s, old); err != nil {
			return fmt.Errorf("push walk: tree %s: %w", old, err)
		}
	}
	for _, e := range t.tree.Entries {
		prev, had := prevTree.entry(e.Name)
		if had && prev.Hash == e.Hash && prev.Mode == e.Mode {
			continue
		}
		switch e.Mode {
		case filemode.Submodule:
		case filemode.Dir:
			var prevDir plumbing.Hash
			if had && prev.Mode == filemode.Dir {
				prevDir = prev.Hash
			}
			if err := s.newInTree(e.Hash, prevDir, out, compared); err != nil {
				return err
			}
		default:
			out[e.Hash] = true
		}
	}
	return nil
}
