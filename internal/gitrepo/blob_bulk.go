package gitrepo

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/bounds"
	"github.com/go-git/go-git/v6/plumbing"
	formatcfg "github.com/go-git/go-git/v6/plumbing/format/config"
	"github.com/go-git/go-git/v6/plumbing/format/idxfile"
	"github.com/go-git/go-git/v6/plumbing/format/packfile"
	"github.com/go-git/go-git/v6/plumbing/storer"
)

// Reading a large folder: go-git reads a packed blob by inflating and hashing its entry
// to learn its header, then inflating it again for its content, one blob after another.
// A folder of 50,000 files spent most of its load there (docs/branch-worker.md#state).

// bulkReadMin is the number of files from which ReadFiles reads their blobs straight from
// the packs; fewer are read one by one (each bulk read decodes the packs' indexes).
const bulkReadMin = 1024

// wantedBlob is a file whose content ReadFiles needs.
type wantedBlob struct {
	hash    plumbing.Hash
	content *[]byte // where it goes
}

// packedBlob is the pack entry of a blob some files hold.
type packedBlob struct {
	start int64
	files []int // indexes into the wanted list
}

// packEntries is what a bulk read needs of a pack's index: every entry's start and CRC-32
// in pack order, for the end and the check of any entry, a delta's base included.
type packEntries struct {
	starts []int64
	crcs   []uint32
	end    int64 // where the entries end: the pack's trailing checksum
	idx    *idxfile.MemoryIndex
}

// readPackedBlobs reads the blobs of wanted that the local copy's packs hold, each once, in
// pack order, on every CPU: a delta is applied to its base, read from the same pack. Every
// entry read is checked against the CRC-32 its pack's index holds. It reports which blobs
// it read; the caller reads the others one by one (a loose object, a blob over the size
// bound, a delta whose base is elsewhere).
func (r *Repo) readPackedBlobs(wanted []wantedBlob) ([]bool, error) {
	done := make([]bool, len(wanted))
	pos, ok := r.repo.Storer.(storer.PackedObjectStorer)
	if !ok {
		return done, nil
	}
	packs, err := pos.ObjectPacks()
	if err != nil {
		return nil, fmt.Errorf("list the local copy's packs: %w", err)
	}
	byHash := make(map[plumbing.Hash][]int, len(wanted))
	for i, w := range wanted {
		byHash[w.hash] = append(byHash[w.hash], i)
	}
	for _, pack := range packs {
		if len(byHash) == 0 {
			break
		}
		entries, blobs, err := r.packEntries(pack, byHash)
		if err != nil {
			return nil, err
		}
		if err := r.inflateEntries(r.packPath(pack), entries, blobs, wanted, done); err != nil {
			return nil, err
		}
	}
	return done, nil
}

// packEntries reads one pack's index, and finds the entries that hold wanted blobs, in
// pack order, taking them out of byHash.
func (r *Repo) packEntries(pack plumbing.Hash, byHash map[plumbing.Hash][]int) (*packEntries, []packedBlob, error) {
	idx, err := r.packIndex(pack)
	if err != nil {
		return nil, nil, err
	}
	info, err := os.Stat(r.packPath(pack))
	if err != nil {
		return nil, nil, err
	}
	iter, err := idx.EntriesByOffset()
	if err != nil {
		return nil, nil, fmt.Errorf("read index of pack %s: %w", pack, err)
	}
	defer iter.Close()
	entries := &packEntries{end: info.Size() - int64(pack.Size()), idx: idx}
	var blobs []packedBlob
	for {
		e, err := iter.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read index of pack %s: %w", pack, err)
		}
		entries.starts = append(entries.starts, int64(e.Offset))
		entries.crcs = append(entries.crcs, e.CRC32)
		h := entryHash(e)
		if files, ok := byHash[h]; ok {
			delete(byHash, h)
			blobs = append(blobs, packedBlob{start: int64(e.Offset), files: files})
		}
	}
	return entries, blobs, nil
}

// inflateEntries reads the blobs from the pack at path on every CPU, each worker a run of
// consecutive entries. Each wanted file is written by the one worker that reads its entry.
func (r *Repo) inflateEntries(path string, entries *packEntries, blobs []packedBlob, wanted []wantedBlob, done []bool) error {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(blobs)/64))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	per := (len(blobs) + workers - 1) / workers
	for w := range workers {
		run := blobs[min(len(blobs), w*per):min(len(blobs), (w+1)*per)]
		wg.Go(func() {
			pr := &packReader{path: path, entries: entries, maxBytes: bounds.FileLimit(r.maxFileBytes), format: r.format}
			defer pr.close()
			for _, b := range run {
				typ, content, ok, err := pr.object(b.start)
				if err != nil {
					errs[w] = err
					return
				}
				if !ok || typ != plumbing.BlobObject {
					continue
				}
				for _, i := range b.files {
					*wanted[i].content, done[i] = content, true
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// maxDeltaDepth bounds a chain of deltas (git makes them at most 50 long).
const maxDeltaDepth = 64

// baseCacheBytes bounds the objects a packReader keeps for the deltas after them; an
// object larger than a quarter of it is not kept.
const baseCacheBytes = 16 << 20

// packReader reads objects of one pack with one file handle and one inflater.
type packReader struct {
	path     string
	entries  *packEntries
	maxBytes int64
	format   formatcfg.ObjectFormat

	f          *os.File
	buf        []byte // an entry's compressed bytes
	zr         io.ReadCloser
	src        bytes.Reader
	bases      map[int64]packedObject
	basesBytes int
}

type packedObject struct {
	typ     plumbing.ObjectType
	content []byte
}

// entryHead is what an entry's header says — its type, its size inflated, where its
// compressed data starts and, for a delta, where its base starts — with where the entry
// ends and the CRC-32 its pack's index holds for it.
type entryHead struct {
	start, end, data, base int64
	crc                    uint32
	typ                    plumbing.ObjectType
	size                   int64
}

func (p *packReader) close() {
	if p.f != nil {
		_ = p.f.Close()
	}
}

// object reads the object whose entry starts at start. A delta's chain is followed down
// by the entries' headers first and applied from its base up, so that one base and one
// delta are held at a time whatever the chain's length. ok is false when the object is
// left to go-git: larger than the bound, a chain too long, a base in another pack, a
// delta go-git's patcher refuses. An entry that does not match its index is an error.
func (p *packReader) object(start int64) (plumbing.ObjectType, []byte, bool, error) {
	var chain []entryHead // the deltas from start down, above base
	var base packedObject
	for at := start; ; {
		if o, ok := p.bases[at]; ok {
			base = o
			break
		}
		if len(chain) >= maxDeltaDepth {
			return 0, nil, false, nil
		}
		h, ok, err := p.head(at)
		if err != nil || !ok || h.size > p.maxBytes {
			return 0, nil, false, err
		}
		if h.base < 0 {
			content, ok, err := p.inflated(h)
			if err != nil || !ok {
				return 0, nil, false, err
			}
			base = packedObject{h.typ, content}
			p.keep(at, base)
			break
		}
		chain = append(chain, h)
		at = h.base
	}
	for i := len(chain) - 1; i >= 0; i-- {
		delta, ok, err := p.inflated(chain[i])
		if err != nil || !ok {
			return 0, nil, false, err
		}
		if target := deltaTargetSize(delta); target < 0 || target > p.maxBytes {
			return 0, nil, false, nil
		}
		content, err := packfile.PatchDelta(base.content, delta)
		if err != nil {
			return 0, nil, false, nil // go-git reads it its own way, or says why it cannot
		}
		base = packedObject{base.typ, content}
		p.keep(chain[i].start, base)
	}
	return base.typ, base.content, true, nil
}

// head reads the header of the entry at start.
func (p *packReader) head(start int64) (entryHead, bool, error) {
	end, crc, ok, err := p.entryEnd(start)
	if err != nil || !ok {
		return entryHead{}, false, err
	}
	var buf [64]byte // the longest header: a type and size, then a base's name
	b := buf[:min(int64(len(buf)), end-start)]
	if err := p.readAt(b, start); err != nil {
		return entryHead{}, false, err
	}
	typ, size, n := entryHeader(b)
	h := entryHead{start: start, end: end, data: start + int64(n), base: -1, crc: crc, typ: typ, size: size}
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		back, m := ofsDeltaOffset(b[n:])
		if m == 0 || back <= 0 || back >= start {
			return entryHead{}, false, p.corrupt(start, errors.New("a delta's base offset is outside the pack"))
		}
		h.base, h.data = start-back, h.data+int64(m)
	case plumbing.REFDeltaObject:
		size := p.format.Size()
		if len(b) < n+size {
			return entryHead{}, false, p.corrupt(start, errors.New("a delta's base is cut short"))
		}
		name, ok := plumbing.FromBytes(b[n : n+size])
		if !ok {
			return entryHead{}, false, p.corrupt(start, errors.New("a delta's base is not an object name"))
		}
		off, err := p.entries.idx.FindOffset(name)
		if err != nil || off == start {
			return entryHead{}, false, nil // the base is in another pack
		}
		h.base, h.data = off, h.data+int64(size)
	default:
		return entryHead{}, false, p.corrupt(start, errors.New("an entry of unknown type"))
	}
	return h, true, nil
}

// inflated reads the entry of h whole, checks it against its CRC-32, and inflates its
// data.
func (p *packReader) inflated(h entryHead) ([]byte, bool, error) {
	if int64(cap(p.buf)) < h.end-h.start {
		p.buf = make([]byte, h.end-h.start)
	}
	b := p.buf[:h.end-h.start] // inflated into a new slice below: reused for the next entry
	if err := p.readAt(b, h.start); err != nil {
		return nil, false, err
	}
	var err error
	if crc32.ChecksumIEEE(b) != h.crc {
		return nil, false, p.corrupt(h.start, errors.New("the entry does not match its index's checksum"))
	}
	p.src.Reset(b[h.data-h.start:])
	if p.zr == nil {
		if p.zr, err = zlib.NewReader(&p.src); err != nil {
			return nil, false, p.corrupt(h.start, err)
		}
	} else if err := p.zr.(zlib.Resetter).Reset(&p.src, nil); err != nil {
		return nil, false, p.corrupt(h.start, err)
	}
	out := make([]byte, h.size)
	if _, err := io.ReadFull(p.zr, out); err != nil {
		return nil, false, p.corrupt(h.start, err)
	}
	return out, true, nil
}

// entryEnd is where the entry at start ends (where the next one starts) and its CRC-32.
// ok is false for an entry larger than any of a blob within the bound.
func (p *packReader) entryEnd(start int64) (int64, uint32, bool, error) {
	starts := p.entries.starts
	i := sort.Search(len(starts), func(i int) bool { return starts[i] >= start })
	if i == len(starts) || starts[i] != start {
		return 0, 0, false, p.corrupt(start, errors.New("no entry of the index starts there"))
	}
	end := p.entries.end
	if i+1 < len(starts) {
		end = starts[i+1]
	}
	// zlib adds a few bytes per stored block to data it cannot compress.
	if n := end - start; n <= 0 || n > p.maxBytes+p.maxBytes/16+1024 {
		return 0, 0, false, nil
	}
	return end, p.entries.crcs[i], true, nil
}

func (p *packReader) readAt(b []byte, at int64) error {
	if p.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return err
		}
		p.f = f
	}
	if _, err := p.f.ReadAt(b, at); err != nil {
		return fmt.Errorf("read %s at %d: %w", p.path, at, err)
	}
	return nil
}

// keep keeps an object read for the deltas after it (git chains them: the next object's
// base is often the one read just before), forgetting all kept past the bound.
func (p *packReader) keep(start int64, o packedObject) {
	if len(o.content) > baseCacheBytes/4 {
		return
	}
	if p.bases == nil || p.basesBytes+len(o.content) > baseCacheBytes {
		p.bases, p.basesBytes = map[int64]packedObject{}, 0
	}
	p.bases[start] = o
	p.basesBytes += len(o.content)
}

func (p *packReader) corrupt(start int64, err error) error {
	return fmt.Errorf("pack %s: the entry at %d: %w", p.path, start, err)
}

// entryHeader reads a pack entry's type and size (inflated), and the length of its header.
func entryHeader(b []byte) (plumbing.ObjectType, int64, int) {
	if len(b) == 0 {
		return plumbing.InvalidObject, 0, 0
	}
	typ := plumbing.ObjectType((b[0] >> 4) & 7)
	size := int64(b[0] & 0x0f)
	shift, i := uint(4), 1
	for b[i-1]&0x80 != 0 {
		if i >= len(b) || shift > 56 {
			return plumbing.InvalidObject, 0, 0
		}
		size |= int64(b[i]&0x7f) << shift
		shift += 7
		i++
	}
	return typ, size, i
}

// ofsDeltaOffset reads how far back an offset delta's base starts (git's encoding adds one
// to every byte but the last), and the length it took; 0 when cut short.
func ofsDeltaOffset(b []byte) (int64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := int64(b[0] & 0x7f)
	i := 1
	for b[i-1]&0x80 != 0 {
		if i >= len(b) || (n+1)>>56 != 0 {
			return 0, 0
		}
		n = ((n + 1) << 7) | int64(b[i]&0x7f)
		i++
	}
	return n, i
}

// deltaTargetSize reads the size of what a delta makes: the second of the two sizes that
// open it (the first is its base's); -1 when cut short.
func deltaTargetSize(delta []byte) int64 {
	size, i := int64(-1), 0
	for range 2 {
		size = 0
		for shift := uint(0); ; shift += 7 {
			if i >= len(delta) || shift > 56 {
				return -1
			}
			c := delta[i]
			i++
			size |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				break
			}
		}
	}
	return size
}
