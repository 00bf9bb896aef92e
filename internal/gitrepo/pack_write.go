package gitrepo

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-billy/v6/osfs"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/idxfile"
	"github.com/go-git/go-git/v6/plumbing/hash"
	"github.com/go-git/go-git/v6/plumbing/storer"
	"github.com/go-git/go-git/v6/storage/filesystem/dotgit"
	"github.com/go-git/go-git/v6/storage/memory"
)

// Packs of the local copy (docs/branch-worker.md#objects-in-packs). A commit's new objects
// are built in memory and written as one pack, never as loose files. Each commit (and each
// fetch) adds a pack, so MergePacks merges them by size tiers: a tier holds the packs from
// its lower bound up to its upper one (under 64 KiB, then up to 1 MiB, then up to 16 MiB),
// and once mergeFanIn packs are in one tier they are rewritten as one, which lands in the
// tier above or stays near the bottom of its own. So a byte is rewritten about once per tier
// (a lowest tier as wide as the others rewrote its growing merged pack at every merge: half
// of a steady stream's CPU), one merge rewrites at most mergeFanIn × the tier's upper bound,
// and packs of 16 MiB and more (a first mirror, a large fetch) are never rewritten, which
// keeps a merge short enough to run in the worker's loop.
const mergeFanIn = 16

var mergeTiers = []int64{64 << 10, 1 << 20, 16 << 20}

// objectBatch holds the objects one commit creates until they are written as one pack.
type objectBatch struct {
	mem    *memory.Storage
	hashes []plumbing.Hash
	// newObject makes an object in the local copy's object format.
	newObject func() plumbing.EncodedObject
	// hasher names objects in the local copy's object format.
	hasher *plumbing.ObjectHasher
}

func (r *Repo) newObjectBatch() *objectBatch {
	return &objectBatch{mem: memory.NewStorage(), newObject: r.repo.Storer.NewEncodedObject,
		hasher: plumbing.FromObjectFormat(r.format)}
}

// storeBlob adds a blob of content, which the batch holds as it is (not a copy) until its
// pack is written: the caller does not change it. A first mirror's files are most of its
// heap, held by the plan until the commit.
func (b *objectBatch) storeBlob(content []byte) (plumbing.Hash, error) {
	h, err := b.hasher.Compute(plumbing.BlobObject, content)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.store(&heldBlob{hash: h, content: content})
}

// heldBlob is a blob whose content is a slice it was given.
type heldBlob struct {
	hash    plumbing.Hash
	content []byte
}

func (o *heldBlob) Hash() plumbing.Hash         { return o.hash }
func (o *heldBlob) Type() plumbing.ObjectType   { return plumbing.BlobObject }
func (o *heldBlob) SetType(plumbing.ObjectType) {}
func (o *heldBlob) Size() int64                 { return int64(len(o.content)) }
func (o *heldBlob) SetSize(int64)               {}
func (o *heldBlob) Writer() (io.WriteCloser, error) {
	return nil, errors.New("a held blob cannot be written")
}
func (o *heldBlob) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.content)), nil
}

// store adds an object; one the batch holds already is not added again (a pack names each
// object once). One the local copy holds may be written again: asking would cost a file
// lookup per new object, and a push copies packs only when they hold each object it sends
// once and nothing else (push_pack.go).
func (b *objectBatch) store(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	if b.mem.HasEncodedObject(h) == nil {
		return h, nil
	}
	h, err := b.mem.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	b.hashes = append(b.hashes, h)
	return h, nil
}

// writePack writes the batch's objects into the local copy as one pack (no delta search:
// the objects are new files, and a push sends them as they are).
func (r *Repo) writePack(b *objectBatch) error {
	if len(b.hashes) == 0 {
		return nil
	}
	name, err := r.encodePack(b.mem, b.hashes)
	if err != nil {
		return fmt.Errorf("write the commit's objects: %w", err)
	}
	r.packsAdded++
	r.noteWritten(name, b.hashes)
	return nil
}

// MergePacks merges the packs of the lowest size tier that has mergeFanIn of them into one
// (at most one merge per call). Every object they hold is kept: unpushed commits are in no
// ref, so nothing is chosen by reachability. It looks at the packs only once mergeFanIn packs
// were added since it last did. A failure leaves the local copy whole (the merged pack is
// written before any other is deleted) and is only worth a log line: nothing depends on it.
func (r *Repo) MergePacks() error {
	if r.packsAdded < mergeFanIn {
		return nil
	}
	pos, ok := r.repo.Storer.(storer.PackedObjectStorer)
	if !ok {
		return nil
	}
	packs, err := pos.ObjectPacks()
	if err != nil {
		return fmt.Errorf("list the local copy's packs: %w", err)
	}
	r.packsAdded = 0
	lower := int64(0)
	for _, upper := range mergeTiers {
		var tier []plumbing.Hash
		for _, h := range packs {
			if info, err := os.Stat(r.packPath(h)); err == nil && info.Size() >= lower && info.Size() < upper {
				tier = append(tier, h)
			}
		}
		lower = upper
		if len(tier) >= mergeFanIn {
			if err := r.mergePacks(pos, tier); err != nil {
				return fmt.Errorf("merge %d packs of the local copy: %w", len(tier), err)
			}
			return nil
		}
	}
	return nil
}

// mergePacks rewrites the objects of packs as one new pack, opens the local copy afresh and
// deletes packs through it.
func (r *Repo) mergePacks(pos storer.PackedObjectStorer, packs []plumbing.Hash) error {
	var hashes []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, h := range packs {
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
	before, err := pos.ObjectPacks()
	if err != nil {
		return err
	}
	if _, err := r.encodePack(r.repo.Storer, hashes); err != nil {
		return err
	}
	// go-git's object cache keeps objects that read their content lazily from the pack they
	// were found in: the local copy is opened afresh (an empty cache) before any pack goes.
	repo, err := openLocal(r.dir, &r.trees)
	if err != nil {
		return fmt.Errorf("reopen the local copy: %w", err)
	}
	if c, ok := r.repo.Storer.(io.Closer); ok {
		_ = c.Close() // its open packs; nothing reads through it any more
	}
	r.repo = repo
	r.trees.reset()
	fresh, ok := repo.Storer.(storer.PackedObjectStorer)
	if !ok {
		return nil
	}
	after, err := fresh.ObjectPacks()
	if err != nil {
		return err
	}
	if len(after) == len(before) {
		return nil // the merged pack is one of those listed (the same content): keep them all
	}
	for _, h := range packs {
		if err := fresh.DeleteOldObjectPackAndIndex(h, time.Time{}); err != nil {
			return err
		}
	}
	return nil
}

// packObjects lists the objects of one pack of the local copy, from its index.
func (r *Repo) packObjects(pack plumbing.Hash) ([]plumbing.Hash, error) {
	idx, err := r.packIndex(pack)
	if err != nil {
		return nil, err
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
		out = append(out, entryHash(e))
	}
}

// entryHash is the object name of an index entry. go-git's index iterators can leave bytes
// of an earlier, longer name past a SHA-1's twenty in the value they return, and such a
// value is not equal to the same name made elsewhere (a map key, a comparison).
func entryHash(e *idxfile.Entry) plumbing.Hash {
	h, ok := plumbing.FromBytes(e.Hash.Bytes())
	if !ok {
		return e.Hash
	}
	return h
}

// packIndex reads the index of one pack of the local copy.
func (r *Repo) packIndex(pack plumbing.Hash) (*idxfile.MemoryIndex, error) {
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
	return idx, nil
}

func (r *Repo) packPath(h plumbing.Hash) string {
	return filepath.Join(r.dir, "objects", "pack", "pack-"+h.String()+".pack")
}
