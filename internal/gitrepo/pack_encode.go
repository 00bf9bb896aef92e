package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto"
	"crypto/sha1" //nolint:gosec // a pack's trailer is SHA-1 in a SHA-1 repository
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/idxfile"
	"github.com/go-git/go-git/v6/plumbing/format/revfile"
	githash "github.com/go-git/go-git/v6/plumbing/hash"
	"github.com/go-git/go-git/v6/plumbing/storer"
)

// encodeWindow is how many objects are compressed together before they are written: the
// compressed bytes of one window are held at a time.
const encodeWindow = 256

// readWindow reads the objects of a window of a pack, which starts at the pack's first-th
// object.
type readWindow func(first int, window []plumbing.Hash) ([]plainObject, error)

// encodePack writes the objects hashes, read through read, as one new pack of the local copy
// (without deltas) and returns its name; it is indexed and readable once this returns.
//
// The pack and its index are written here, not through go-git's pack writer, which parses
// (inflates and hashes again) every object it is handed to build the index: the index is
// known as the pack is written. Objects are compressed on every CPU, a window at a time,
// and written in order (docs/branch-worker.md#objects-in-packs).
func (r *Repo) encodePack(hashes []plumbing.Hash, read readWindow) (plumbing.Hash, error) {
	reindexer, ok := r.repo.Storer.(interface{ Reindex() error })
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("the local copy's storage cannot take packs")
	}
	dir := filepath.Join(r.dir, "objects", "pack")
	tmp, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone by rename on success
	pw := newPackOut(tmp, r.sha1())
	name, entries, err := pw.write(hashes, read)
	if err == nil {
		err = tmp.Sync() // on disk before its index names it
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write pack: %w", err)
	}
	if err := r.placePack(dir, tmp.Name(), name, entries); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := reindexer.Reindex(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read the local copy's packs: %w", err)
	}
	return name, nil
}

// placePack writes the index and the reverse index of the pack written to tmpPack and moves
// the three into place. The index is moved last: a pack is seen only with its index, so a
// crash in between leaves a pack no reader lists. The reverse index (offsets in pack order)
// lets go-git open the pack without decoding its whole index: the storage reads every
// pack's again after each commit (encodePack). A pack of the same name is the same objects
// and is kept as it is.
func (r *Repo) placePack(dir, tmpPack string, name plumbing.Hash, entries []idxfile.Entry) error {
	base := filepath.Join(dir, "pack-"+name.String())
	if _, err := os.Stat(base + ".idx"); err == nil {
		return nil
	}
	idx, err := packIndexOf(name, entries)
	if err != nil {
		return err
	}
	tmpIdx, err := r.writeTemp(dir, "tmp_idx_", true, func(w io.Writer, h hash.Hash) error { return idxfile.Encode(w, h, idx) })
	if err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	defer func() { _ = os.Remove(tmpIdx) }()
	// A reverse index lost in a crash is only slower: go-git makes one from the index.
	tmpRev, err := r.writeTemp(dir, "tmp_rev_", false, func(w io.Writer, h hash.Hash) error { return revfile.Encode(w, h, idx) })
	if err != nil {
		return fmt.Errorf("write pack reverse index: %w", err)
	}
	defer func() { _ = os.Remove(tmpRev) }()
	for _, m := range [][2]string{{tmpPack, base + ".pack"}, {tmpRev, base + ".rev"}, {tmpIdx, base + ".idx"}} {
		if err := os.Chmod(m[0], 0o444); err != nil {
			return err
		}
		if err := os.Rename(m[0], m[1]); err != nil {
			return err
		}
	}
	return nil
}

// writeTemp writes a new temporary file in dir through write, which is given the hash of
// the local copy's object format for the file's trailer, and returns its path; durable
// puts it on disk before it returns. The pack and its index are written durably, as git
// does: go-git reads every pack of the local copy again after each commit, and one whose
// index a crash cut short would stop every later commit.
func (r *Repo) writeTemp(dir, prefix string, durable bool, write func(io.Writer, hash.Hash) error) (string, error) {
	f, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return "", err
	}
	h := githash.New(crypto.SHA1)
	if !r.sha1() {
		h = githash.New(crypto.SHA256)
	}
	bw := bufio.NewWriter(f)
	err = write(bw, h)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// packIndexOf builds the index of pack name from its entries.
func packIndexOf(name plumbing.Hash, entries []idxfile.Entry) (*idxfile.MemoryIndex, error) {
	w := new(idxfile.Writer)
	if err := w.OnHeader(uint32(len(entries))); err != nil {
		return nil, err
	}
	for _, e := range entries {
		w.Add(e.Hash, e.Offset, e.CRC32)
	}
	if err := w.OnFooter(name); err != nil {
		return nil, fmt.Errorf("index pack %s: %w", name, err)
	}
	return w.Index()
}

// packOut writes one pack: the header, each entry, and the trailer, a hash of all before it.
type packOut struct {
	out    *bufio.Writer
	sum    hash.Hash
	offset uint64
}

func newPackOut(w io.Writer, sha1Format bool) *packOut {
	sum := sha256.New()
	if sha1Format {
		sum = sha1.New() //nolint:gosec // the pack format's own checksum
	}
	return &packOut{out: bufio.NewWriterSize(w, 256<<10), sum: sum}
}

func (p *packOut) put(b []byte) error {
	p.sum.Write(b)
	p.offset += uint64(len(b))
	_, err := p.out.Write(b)
	return err
}

// write writes the pack of hashes and returns its name (the trailer) and its index entries.
func (p *packOut) write(hashes []plumbing.Hash, read readWindow) (plumbing.Hash, []idxfile.Entry, error) {
	head := make([]byte, 12)
	copy(head, "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(len(hashes)))
	if err := p.put(head); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	entries := make([]idxfile.Entry, 0, len(hashes))
	c := newCompressors()
	for start := 0; start < len(hashes); start += encodeWindow {
		window := hashes[start:min(len(hashes), start+encodeWindow)]
		objs, err := read(start, window)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		packed, err := c.compress(objs)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		for i, o := range objs {
			e := idxfile.Entry{Hash: window[i], Offset: p.offset}
			h := packEntryHeader(o.typ, int64(len(o.content)))
			e.CRC32 = crc32.Update(crc32.ChecksumIEEE(h), crc32.IEEETable, packed[i])
			if err := p.put(h); err != nil {
				return plumbing.ZeroHash, nil, err
			}
			if err := p.put(packed[i]); err != nil {
				return plumbing.ZeroHash, nil, err
			}
			entries = append(entries, e)
		}
	}
	trailer := p.sum.Sum(nil)
	if _, err := p.out.Write(trailer); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if err := p.out.Flush(); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	name, ok := plumbing.FromBytes(trailer)
	if !ok {
		return plumbing.ZeroHash, nil, errors.New("the pack's checksum is not an object name")
	}
	return name, entries, nil
}

// packEntryHeader is the header a pack entry starts with: its type and inflated size.
func packEntryHeader(t plumbing.ObjectType, size int64) []byte {
	h := make([]byte, 0, 10)
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size != 0 {
		h = append(h, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(h, c)
}

// plainObject is an object's type and content, read for a pack.
type plainObject struct {
	typ     plumbing.ObjectType
	content []byte
}

// readObjects reads the objects hashes from src, one after another (a storage is not asked
// from several goroutines at once).
func readObjects(src storer.EncodedObjectStorer, hashes []plumbing.Hash) ([]plainObject, error) {
	out := make([]plainObject, len(hashes))
	for i, h := range hashes {
		o, err := src.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
		content, err := objectContent(o)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
		out[i] = plainObject{typ: o.Type(), content: content}
	}
	return out, nil
}

// objectContent is an object's content.
func objectContent(o plumbing.EncodedObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	buf := bytes.NewBuffer(make([]byte, 0, o.Size()))
	if _, err := buf.ReadFrom(rd); err != nil {
		return nil, err
	}
	if int64(buf.Len()) != o.Size() {
		return nil, fmt.Errorf("read %d bytes of %d", buf.Len(), o.Size())
	}
	return buf.Bytes(), nil
}

// compressors deflate a window of objects on every CPU, each with its own zlib writer kept
// from window to window.
type compressors struct {
	writers []*zlib.Writer
	bufs    []*bytes.Buffer
}

func newCompressors() *compressors {
	n := max(1, runtime.GOMAXPROCS(0))
	c := &compressors{writers: make([]*zlib.Writer, n), bufs: make([]*bytes.Buffer, n)}
	for i := range n {
		c.bufs[i] = new(bytes.Buffer)
		c.writers[i] = zlib.NewWriter(c.bufs[i])
	}
	return c
}

// compress returns each object's content deflated, in order.
func (c *compressors) compress(objs []plainObject) ([][]byte, error) {
	out := make([][]byte, len(objs))
	errs := make([]error, len(c.writers))
	var wg sync.WaitGroup
	for w := range c.writers {
		wg.Go(func() {
			for i := w; i < len(objs); i += len(c.writers) {
				c.bufs[w].Reset()
				c.writers[w].Reset(c.bufs[w])
				if _, err := c.writers[w].Write(objs[i].content); err != nil {
					errs[w] = err
					return
				}
				if err := c.writers[w].Close(); err != nil {
					errs[w] = err
					return
				}
				out[i] = bytes.Clone(c.bufs[w].Bytes())
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
