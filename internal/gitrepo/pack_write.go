package gitrepo

import (
	"crypto"
	"errors"
	"fmt"
	"io"
	"time"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v6/osfs"
	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/idxfile"
	"github.com/go-git/go-git/v6/plumbing/format/packfile"
	"github.com/go-git/go-git/v6/plumbing/hash"
	"github.com/go-git/go-git/v6/plumbing/storer"
	"github.com/go-git/go-git/v6/storage/filesystem/dotgit"
	"github.com/go-git/go-git/v6/storage/memory"
)

// Packs of the local copy (docs/git-repositories.md#objects-in-packs). A commit's new
// objects are built in memory and written as one pack, never as loose files (one file, and
// one compression, per object). Small packs are merged once there are maxSmallPacks of them,
// so a long run of small commits leaves a bounded number of packs; packs of at least
// smallPackBytes (a first mirror, a fetch of a large history) are left as they are.
const (
	maxSmallPacks  = 16
	smallPackBytes = 1 << 20
)

// objectBatch holds the objects one commit creates until they are written as one pack.
type objectBatch struct {
	mem    *memory.Storage
	hashes []plumbing.Hash
	// newObject makes an object in the local copy's object format.
	newObject func() plumbing.EncodedObject
}

func (r *Repo) newObjectBatch() *objectBatch {
	return &objectBatch{mem: memory.NewStorage(), newObject: r.repo.Storer.NewEncodedObject}
}

func (b *objectBatch) store(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h, err := b.mem.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	b.hashes = append(b.hashes, h)
	return h, nil
}

// writePack writes the batch's objects into the local copy as one pack (no delta search:
// the objects are new files, and a push sends them as they are), then merges small packs
// when there are enough of them.
func (r *Repo) writePack(b *objectBatch) error {
	if len(b.hashes) == 0 {
		return nil
	}
	if err := r.encodePack(b.mem, b.hashes); err != nil {
		return fmt.Errorf("write the commit's objects: %w", err)
	}
	if err := r.mergeSmallPacks(); err != nil {
		return fmt.Errorf("merge the local copy's small packs: %w", err)
	}
	return nil
}

// encodePack writes the objects hashes, read from src, as one new pack of the local copy;
// it is indexed and readable once this returns.
func (r *Repo) encodePack(src storer.EncodedObjectStorer, hashes []plumbing.Hash) error {
	pfw, ok := r.repo.Storer.(storer.PackfileWriter)
	if !ok {
		return fmt.Errorf("the local copy's storage cannot write packs")
	}
	w, err := pfw.PackfileWriter()
	if err != nil {
		return err
	}
	if _, err := packfile.NewEncoder(w, src, false).Encode(hashes, 0); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// mergeSmallPacks rewrites the small packs as one when there are maxSmallPacks of them:
// every object they hold is kept (unpushed commits are in no ref, so nothing is chosen by
// reachability), and what is rewritten is bounded by maxSmallPacks × smallPackBytes.
func (r *Repo) mergeSmallPacks() error {
	pos, ok := r.repo.Storer.(storer.PackedObjectStorer)
	if !ok {
		return nil
	}
	packs, err := pos.ObjectPacks()
	if err != nil {
		return err
	}
	var small []plumbing.Hash
	for _, h := range packs {
		if info, err := os.Stat(r.packPath(h, "pack")); err == nil && info.Size() < smallPackBytes {
			small = append(small, h)
		}
	}
	if len(small) < maxSmallPacks {
		return nil
	}
	var hashes []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, h := range small {
		objs, err := r.packObjects(h)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if !seen[o] {
				seen[o] = true
				hashes = append(hashes, o)
			}
		}
	}
	if err := r.encodePack(r.repo.Storer, hashes); err != nil {
		return err
	}
	for _, h := range small {
		if err := pos.DeleteOldObjectPackAndIndex(h, time.Time{}); err != nil {
			return err
		}
	}
	// go-git's object cache keeps objects that read their content lazily from the pack they
	// were found in, which is gone now: the storage is opened afresh, with an empty cache.
	repo, err := git.PlainOpen(r.dir)
	if err != nil {
		return fmt.Errorf("reopen the local copy: %w", err)
	}
	if c, ok := r.repo.Storer.(io.Closer); ok {
		_ = c.Close() // its open packs; nothing is written through it any more
	}
	r.repo = repo
	return nil
}

// packObjects lists the objects of one pack of the local copy, from its index.
func (r *Repo) packObjects(pack plumbing.Hash) ([]plumbing.Hash, error) {
	f, err := dotgit.New(osfs.New(r.dir)).ObjectPackIdx(pack)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hasher := hash.New(crypto.SHA1)
	if pack.Size() == crypto.SHA256.Size() {
		hasher = hash.New(crypto.SHA256)
	}
	idx := idxfile.NewMemoryIndex(pack.Size())
	if err := idxfile.NewDecoder(f, hasher).Decode(idx); err != nil {
		return nil, fmt.Errorf("read index of pack %s: %w", pack, err)
	}
	entries, err := idx.Entries()
	if err != nil {
		return nil, err
	}
	defer entries.Close()
	var out []plumbing.Hash
	for {
		e, err := entries.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read index of pack %s: %w", pack, err)
		}
		out = append(out, e.Hash)
	}
}

func (r *Repo) packPath(h plumbing.Hash, ext string) string {
	return filepath.Join(r.dir, "objects", "pack", "pack-"+h.String()+"."+ext)
}
