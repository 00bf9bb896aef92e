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
			pr := &packReader{path: path, entries: entries, maxBytes: r.fileBound(), format: r.format}
			defer pr.close()
			for _, b := range run {
				typ, content, ok, err := pr.object(b.start, 0)
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

// baseCacheBytes bounds the objects a packReader keeps for the deltas after them.
const baseCacheBytes = 16 << 20

// packReader reads objects of one pack with one file handle and one inflater.
type packReader struct {
	path     string
	entries  *packEntries
	maxBytes int64
	format   formatcfg.ObjectFormat

	f          *os.File
	zr         io.ReadCloser
	src        bytes.Reader
	bases      map[int64]packedObject
	basesBytes int
}

type packedObject struct {
	typ     plumbing.ObjectType
	content []byte
}

func (p *packReader) close() {
	if p.f != nil {
		_ = p.f.Close()
	}
}

// object reads the object whose entry starts at start, applying deltas. ok is false when
// it is not read here: larger than the bound, or a delta whose base is in another pack.
func (p *packReader) object(start int64, depth int) (plumbing.ObjectType, []byte, bool, error) {
	if o, ok := p.bases[start]; ok {
		return o.typ, o.content, true, nil
	}
	if depth > maxDeltaDepth {
		return 0, nil, false, nil
	}
	entry, ok, err := p.entry(start)
	if err != nil || !ok {
		return 0, nil, false, err
	}
	typ, size, n := entryHeader(entry)
	body := entry[n:]
	var base int64 = -1
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		back, m := ofsDeltaOffset(body)
		if m == 0 || back <= 0 || back > start {
			return 0, nil, false, p.corrupt(start, "a delta's base offset is outside the pack")
		}
		base, body = start-back, body[m:]
	case plumbing.REFDeltaObject:
		size := p.format.Size()
		if len(body) < size {
			return 0, nil, false, p.corrupt(start, "a delta's base is cut short")
		}
		h, ok := plumbing.FromBytes(body[:size])
		if !ok {
			return 0, nil, false, p.corrupt(start, "a delta's base is not an object name")
		}
		off, err := p.entries.idx.FindOffset(h)
		if err != nil {
			return 0, nil, false, nil // the base is in another pack
		}
		base, body = off, body[size:]
	default:
		return 0, nil, false, p.corrupt(start, "an entry of unknown type")
	}
	if size > p.maxBytes {
		return 0, nil, false, nil
	}
	content, err := p.inflate(body, size)
	if err != nil {
		return 0, nil, false, p.corrupt(start, err.Error())
	}
	if base >= 0 {
		if target := deltaTargetSize(content); target < 0 || target > p.maxBytes {
			return 0, nil, false, nil
		}
		btyp, bcontent, ok, err := p.object(base, depth+1)
		if err != nil || !ok {
			return 0, nil, false, err
		}
		if content, err = packfile.PatchDelta(bcontent, content); err != nil {
			return 0, nil, false, p.corrupt(start, err.Error())
		}
		typ = btyp
	}
	// Kept also when read for itself: git chains deltas, the next object's base is often
	// the one read just before.
	p.keepBase(start, packedObject{typ, content})
	return typ, content, true, nil
}

// entry reads the bytes of the entry at start and checks them against its CRC-32.
func (p *packReader) entry(start int64) ([]byte, bool, error) {
	starts := p.entries.starts
	i := sort.Search(len(starts), func(i int) bool { return starts[i] >= start })
	if i == len(starts) || starts[i] != start {
		return nil, false, p.corrupt(start, "no entry of the index starts there")
	}
	end := p.entries.end
	if i+1 < len(starts) {
		end = starts[i+1]
	}
	// zlib adds a few bytes per stored block to data it cannot compress.
	if n := end - start; n <= 0 || n > p.maxBytes+p.maxBytes/16+1024 {
		return nil, false, nil
	}
	if p.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return nil, false, err
		}
		p.f = f
	}
	b := make([]byte, end-start)
	if _, err := p.f.ReadAt(b, start); err != nil {
		return nil, false, fmt.Errorf("read %s at %d: %w", p.path, start, err)
	}
	if crc32.ChecksumIEEE(b) != p.entries.crcs[i] {
		return nil, false, p.corrupt(start, "the entry does not match its index's checksum")
	}
	return b, true, nil
}

// inflate inflates exactly size bytes of zlib data.
func (p *packReader) inflate(data []byte, size int64) ([]byte, error) {
	p.src.Reset(data)
	if p.zr == nil {
		zr, err := zlib.NewReader(&p.src)
		if err != nil {
			return nil, err
		}
		p.zr = zr
	} else if err := p.zr.(zlib.Resetter).Reset(&p.src, nil); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(p.zr, out); err != nil {
		return nil, err
	}
	return out, nil
}

// keepBase keeps an object read for the deltas after it, forgetting all kept past the
// bound.
func (p *packReader) keepBase(start int64, o packedObject) {
	if p.bases == nil || p.basesBytes+len(o.content) > baseCacheBytes {
		p.bases, p.basesBytes = map[int64]packedObject{}, 0
	}
	p.bases[start] = o
	p.basesBytes += len(o.content)
}

func (p *packReader) corrupt(start int64, what string) error {
	return fmt.Errorf("pack %s: the entry at %d: %s", p.path, start, what)
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
		if i >= len(b) || i > 9 {
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
