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
	"sync"

	"github.com/go-git/go-git/v6/plumbing"
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
	start, end int64 // the entry's bytes in the pack
	crc        uint32
	files      []int // indexes into the wanted list
}

// readPackedBlobs reads the blobs of wanted that are whole entries of the local copy's
// packs (not deltas), each once, in pack order, on every CPU, and checks each entry
// against the CRC-32 its pack's index holds. It reports which it read; the caller reads
// the others one by one (a delta, a loose object, a blob over the size bound).
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
		entries, err := r.packEntries(pack, byHash)
		if err != nil {
			return nil, err
		}
		if err := r.inflateEntries(r.packPath(pack), entries, wanted, done); err != nil {
			return nil, err
		}
	}
	return done, nil
}

// packEntries finds the entries of one pack that hold wanted blobs, in pack order, and
// takes them out of byHash.
func (r *Repo) packEntries(pack plumbing.Hash, byHash map[plumbing.Hash][]int) ([]packedBlob, error) {
	idx, err := r.packIndex(pack)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(r.packPath(pack))
	if err != nil {
		return nil, err
	}
	iter, err := idx.EntriesByOffset()
	if err != nil {
		return nil, fmt.Errorf("read index of pack %s: %w", pack, err)
	}
	defer iter.Close()
	var out []packedBlob
	last := -1 // the wanted entry just before, whose end is the next entry's start
	for {
		e, err := iter.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read index of pack %s: %w", pack, err)
		}
		if last >= 0 {
			out[last].end, last = int64(e.Offset), -1
		}
		files, ok := byHash[e.Hash]
		if !ok {
			continue
		}
		delete(byHash, e.Hash)
		out = append(out, packedBlob{start: int64(e.Offset), crc: e.CRC32, files: files})
		last = len(out) - 1
	}
	if last >= 0 {
		out[last].end = info.Size() - int64(pack.Size()) // the pack's trailing checksum
	}
	return out, nil
}

// inflateEntries reads entries of the pack at path on every CPU, each worker a run of
// consecutive entries.
func (r *Repo) inflateEntries(path string, entries []packedBlob, wanted []wantedBlob, done []bool) error {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(entries)/64))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	per := (len(entries) + workers - 1) / workers
	for w := range workers {
		run := entries[min(len(entries), w*per):min(len(entries), (w+1)*per)]
		wg.Go(func() { errs[w] = r.inflateRun(path, run, wanted, done) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// inflateRun reads a run of entries with one file handle and one inflater. Each wanted
// file is written by the one worker that reads its entry.
func (r *Repo) inflateRun(path string, run []packedBlob, wanted []wantedBlob, done []bool) error {
	if len(run) == 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// zlib adds a few bytes per stored block to data it cannot compress.
	maxBytes := r.fileBound()
	maxEntry := maxBytes + maxBytes/16 + 1024
	var buf []byte
	var zr io.ReadCloser
	var src bytes.Reader
	for _, e := range run {
		n := e.end - e.start
		if n <= 0 || n > maxEntry {
			continue // larger than any entry of a blob within the bound: read one by one
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := f.ReadAt(b, e.start); err != nil {
			return fmt.Errorf("read %s at %d: %w", path, e.start, err)
		}
		if crc32.ChecksumIEEE(b) != e.crc {
			return fmt.Errorf("pack %s: the entry at %d does not match its index's checksum", path, e.start)
		}
		typ, size, header := entryHeader(b)
		if typ != plumbing.BlobObject || size > maxBytes {
			continue
		}
		src.Reset(b[header:])
		if zr == nil {
			if zr, err = zlib.NewReader(&src); err != nil {
				return fmt.Errorf("pack %s: the entry at %d: %w", path, e.start, err)
			}
		} else if err := zr.(zlib.Resetter).Reset(&src, nil); err != nil {
			return fmt.Errorf("pack %s: the entry at %d: %w", path, e.start, err)
		}
		content := make([]byte, size)
		if _, err := io.ReadFull(zr, content); err != nil {
			return fmt.Errorf("pack %s: the entry at %d: %w", path, e.start, err)
		}
		for _, i := range e.files {
			*wanted[i].content, done[i] = content, true
		}
	}
	return nil
}

// entryHeader reads a pack entry's type and inflated size, and the length of its header.
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
