package gitrepo

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-git/go-billy/v6/osfs"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/idxfile"
	"github.com/go-git/go-git/v6/plumbing/hash"
	"github.com/go-git/go-git/v6/plumbing/storer"
	"github.com/go-git/go-git/v6/storage/filesystem/dotgit"
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

// objectBatch holds the objects one commit creates until they are written as one pack: each
// object's name, type and content, nothing more (a first mirror of 100,000 files holds as
// many objects at once, and go-git's memory storage spent three records on each).
type objectBatch struct {
	objects []batchObject
	// hasher names objects in the local copy's object format.
	hasher *plumbing.ObjectHasher
}

// batchObject is one object of a batch.
type batchObject struct {
	hash plumbing.Hash
	plainObject
}

// newObjectBatch makes a batch for about size objects.
func (r *Repo) newObjectBatch(size int) *objectBatch {
	return &objectBatch{objects: make([]batchObject, 0, size), hasher: plumbing.FromObjectFormat(r.format)}
}

// storeBlob adds a blob of content, which the batch holds as it is (not a copy) until its
// pack is written: the caller does not change it. A first mirror's files are most of its
// heap, held by the plan until the commit.
func (b *objectBatch) storeBlob(content []byte) (plumbing.Hash, error) {
	return b.store(plumbing.BlobObject, content)
}

// storeEncoded adds the object encode writes (a tree, a commit) into a buffer of about
// size bytes, its expected length: a buffer grown by doubling held up to twice a large
// tree.
func (b *objectBatch) storeEncoded(size int, encode func(plumbing.EncodedObject) error) (plumbing.Hash, error) {
	o := &encodedObject{content: make([]byte, 0, size), hasher: b.hasher}
	if err := encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return b.store(o.typ, o.content)
}

// store adds an object. One the batch holds already is dropped when the pack is written (a
// pack names each object once). One the local copy holds may be written again: asking
// would cost a file lookup per new object, and a push copies packs only when they hold
// each object it sends once and nothing else (push_pack.go).
func (b *objectBatch) store(typ plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	h, err := b.hasher.Compute(typ, content)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	b.objects = append(b.objects, batchObject{hash: h, plainObject: plainObject{typ: typ, content: content}})
	return h, nil
}

// distinct drops the objects the batch holds more than once (a pack names each object
// once), keeping the first of each in the order they were stored, and returns the names
// of those left in that order.
func (b *objectBatch) distinct() []plumbing.Hash {
	byName := make([]int, len(b.objects))
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(x, y int) int {
		if c := b.objects[x].hash.Compare(b.objects[y].hash.Bytes()); c != 0 {
			return c
		}
		return x - y // the first stored first
	})
	repeated := make([]bool, len(b.objects))
	for i := 1; i < len(byName); i++ {
		if b.objects[byName[i]].hash.Compare(b.objects[byName[i-1]].hash.Bytes()) == 0 {
			repeated[byName[i]] = true
		}
	}
	kept := b.objects[:0]
	for i, o := range b.objects {
		if !repeated[i] {
			kept = append(kept, o)
		}
	}
	clear(b.objects[len(kept):]) // what they held is not kept alive past the pack
	b.objects = kept
	hashes := make([]plumbing.Hash, len(b.objects))
	for i, o := range b.objects {
		hashes[i] = o.hash
	}
	return hashes
}

// read returns the contents of the objects from the first-th on, as many as window names
// (the names distinct returned, from the first-th on).
func (b *objectBatch) read(first int, window []plumbing.Hash) ([]plainObject, error) {
	if first+len(window) > len(b.objects) {
		return nil, fmt.Errorf("objects %d to %d asked of a batch of %d", first, first+len(window), len(b.objects))
	}
	out := make([]plainObject, len(window))
	for i, h := range window {
		o := b.objects[first+i]
		if o.hash.Compare(h.Bytes()) != 0 {
			return nil, fmt.Errorf("object %d of the batch is %s, not %s", first+i, o.hash, h)
		}
		out[i] = o.plainObject
	}
	return out, nil
}

// encodedObject is an object encoded into a buffer it was given.
type encodedObject struct {
	typ     plumbing.ObjectType
	content []byte
	hasher  *plumbing.ObjectHasher
}

// Hash names the object as encoded so far (the batch names it again once it is whole).
func (o *encodedObject) Hash() plumbing.Hash {
	h, err := o.hasher.Compute(o.typ, o.content)
	if err != nil {
		return plumbing.ZeroHash
	}
	return h
}

func (o *encodedObject) Type() plumbing.ObjectType       { return o.typ }
func (o *encodedObject) SetType(t plumbing.ObjectType)   { o.typ = t }
func (o *encodedObject) Size() int64                     { return int64(len(o.content)) }
func (o *encodedObject) SetSize(int64)                   {}
func (o *encodedObject) Writer() (io.WriteCloser, error) { return o, nil }
func (o *encodedObject) Write(p []byte) (int, error) {
	o.content = append(o.content, p...)
	return len(p), nil
}
func (o *encodedObject) Close() error { return nil }
func (o *encodedObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.content)), nil
}

// writePack writes the batch's objects into the local copy as one pack (no delta search:
// the objects are new files, and a push sends them as they are).
func (r *Repo) writePack(b *objectBatch) error {
	if len(b.objects) == 0 {
		return nil
	}
	hashes := b.distinct()
	name, err := r.encodePack(hashes, b.read)
	if err != nil {
		return fmt.Errorf("write the commit's objects: %w", err)
	}
	r.packsAdded++
	r.noteWritten(name, hashes)
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
	read := func(_ int, window []plumbing.Hash) ([]plainObject, error) { return readObjects(r.repo.Storer, window) }
	if _, err := r.encodePack(hashes, read); err != nil {
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
