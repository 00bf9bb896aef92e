package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // a pack's trailer is SHA-1 in a SHA-1 repository: Git's format, not a security choice
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"runtime/debug"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/client"
	"github.com/go-git/go-git/v6/plumbing/format/config"
	"github.com/go-git/go-git/v6/plumbing/format/packfile"
	"github.com/go-git/go-git/v6/plumbing/protocol/capability"
	"github.com/go-git/go-git/v6/plumbing/protocol/packp"
	"github.com/go-git/go-git/v6/plumbing/revlist"
	"github.com/go-git/go-git/v6/plumbing/transport"
)

// What a push sends (docs/branch-worker.md#push). The objects the remote lacks are found by
// the push walk (push_walk.go). When every one of them is in the packs this copy wrote for
// its commits since its last push — a commit's new objects are written as one pack without
// deltas — the pack sent is those packs' entries copied from their files as they are: no
// object is read, inflated or compressed again (go-git's encoder did all three, a fifth of
// a first mirror's CPU). Otherwise go-git's encoder builds the pack from the objects.

// largePack is the size of a pack sent from which the memory the collector freed is given
// back to the system before the push.
const largePack = 8 << 20

// Bounds of the packs remembered for the next push: past either, the record starts again
// (and the next push is encoded by go-git).
const (
	maxWrittenPacks   = 256
	maxWrittenObjects = 1 << 20
)

// writtenPack is a pack this copy wrote for a commit: the name of its file and its objects.
type writtenPack struct {
	name    plumbing.Hash
	objects []plumbing.Hash
}

// noteWritten records a commit's pack for the next push.
func (r *Repo) noteWritten(name plumbing.Hash, objects []plumbing.Hash) {
	count := len(objects)
	for _, p := range r.written {
		count += len(p.objects)
	}
	if len(r.written) >= maxWrittenPacks || count > maxWrittenObjects {
		r.written = nil
	}
	r.written = append(r.written, writtenPack{name: name, objects: objects})
}

// sendPack moves the remote branch from expected to next in one receive-pack session. It
// returns git.NoErrAlreadyUpToDate when the remote is at next already, and an error that
// isRejection recognizes when the remote branch is not at expected.
func (r *Repo) sendPack(ctx context.Context, branch, expected string, next plumbing.Hash) (err error) {
	u, err := transport.ParseURL(r.url)
	if err != nil {
		return err
	}
	if r.http != nil {
		r.http.forgetDiscovery()
		defer r.http.forgetDiscovery() // it holds the push's Authorization header
	}
	sess, err := client.New(r.options...).Handshake(ctx, &transport.Request{URL: u, Command: transport.ReceivePackService})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := sess.Close(); err == nil {
			err = cerr
		}
	}()
	refs, err := sess.GetRemoteRefs(ctx, nil)
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return err
	}
	name := localRef(branch)
	old, haves := plumbing.ZeroHash, []plumbing.Hash(nil)
	if refs != nil {
		for _, ref := range refs.References {
			if ref.Type() != plumbing.HashReference {
				continue
			}
			haves = append(haves, ref.Hash())
			if ref.Name() == name {
				old = ref.Hash()
			}
		}
	}
	switch {
	case old == next:
		return git.NoErrAlreadyUpToDate
	case expected == "" && !old.IsZero():
		return fmt.Errorf("remote ref %s required to be absent but is %s", name, old)
	case expected != "" && old.IsZero():
		return fmt.Errorf("remote ref %s required to be %s but is absent", name, expected)
	case expected != "" && old.String() != expected:
		return fmt.Errorf("remote ref %s required to be %s but is %s", name, expected, old)
	}
	if err := r.fastForward(name, old, next); err != nil {
		return err
	}
	hashes, err := r.objectsToSend(next, haves)
	if err != nil {
		return err
	}
	pack, err := r.packToSend(hashes)
	if err != nil {
		return err
	}
	req := &transport.PushRequest{
		Commands: []*packp.Command{{Name: name, Old: old, New: next}},
		Packfile: pack,
		Atomic:   sess.Capabilities().Supports(capability.Atomic),
	}
	c, copied := pack.(*copiedPack)
	streamed := false
	if copied && r.http != nil && !r.noStreaming && c.size >= r.streamAbove {
		// go-git's HTTP session would hold the whole request in memory: it is streamed.
		err = r.http.streamPush(ctx, r.repo.Storer, sess.Capabilities(), req)
		streamed = !errors.Is(err, errNotStreamable) && !errors.Is(err, errStreamRefused)
		if errors.Is(err, errStreamRefused) {
			// Refused before any ref was looked at, its pack read in part: go-git sends it
			// again from its start. A remote that refused the form is never streamed to again.
			r.noStreaming = true
			_ = pack.Close()
			if pack, err = r.packToSend(hashes); err != nil {
				return err
			}
			req.Packfile = pack
		}
	}
	if !streamed {
		if copied {
			freeBeforeLargePush(c.size)
		}
		err = sess.Push(ctx, r.repo.Storer, req)
	}
	if err != nil {
		_ = pack.Close()
		return err
	}
	r.written = nil // all on the remote now
	return r.repo.Storer.SetReference(plumbing.NewHashReference(trackingRef(branch), next))
}

// freeBeforeLargePush returns what the collector freed since it last ran to the system
// before go-git sends a pack of size bytes, when it is large: go-git's HTTP session holds
// the whole request in memory (docs/branch-worker.md#push).
func freeBeforeLargePush(size int64) {
	if size >= largePack {
		debug.FreeOSMemory()
	}
}

// fastForward refuses an update of the remote branch from old to a commit that does not
// descend from it (the operator never rewrites history): with the error isRejection knows,
// the worker fetches and replays its writes on the remote's tip.
func (r *Repo) fastForward(name plumbing.ReferenceName, old, next plumbing.Hash) error {
	if old.IsZero() {
		return nil
	}
	oldCommit, err := r.repo.CommitObject(old)
	if err != nil {
		return fmt.Errorf("non-fast-forward update of %s: the remote's tip %s is not in the local copy", name, old)
	}
	nextCommit, err := r.repo.CommitObject(next)
	if err != nil {
		return fmt.Errorf("push %s: commit %s: %w", name, next, err)
	}
	descends, err := oldCommit.IsAncestor(nextCommit)
	if err != nil {
		return fmt.Errorf("push %s: is %s an ancestor of %s: %w", name, old, next, err)
	}
	if !descends {
		return fmt.Errorf("non-fast-forward update of %s: %s does not descend from %s", name, next, old)
	}
	return nil
}

// objectsToSend lists the objects next reaches that the remote, which holds haves, may lack.
func (r *Repo) objectsToSend(next plumbing.Hash, haves []plumbing.Hash) ([]plumbing.Hash, error) {
	if shallow, err := r.repo.Storer.Shallow(); err == nil {
		haves = append(haves, shallow...)
	}
	if st, ok := r.repo.Storer.(localStorage); ok {
		return st.RevListObjects([]plumbing.Hash{next}, haves)
	}
	return revlist.Objects(r.repo.Storer, []plumbing.Hash{next}, haves)
}

// packToSend returns the pack of hashes: the written packs copied, when they hold exactly
// hashes, else one encoded by go-git.
func (r *Repo) packToSend(hashes []plumbing.Hash) (io.ReadCloser, error) {
	if pack, ok := r.copiedPacks(hashes); ok {
		return pack, nil
	}
	rd, wr := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := packfile.NewEncoder(wr, r.repo.Storer, false).Encode(hashes, 0)
		_ = wr.CloseWithError(err)
	}()
	return &encodedPack{PipeReader: rd, done: done}, nil
}

// encodedPack is the reading end of go-git's encoder; closing it waits for the encoder to
// stop reading the local copy.
type encodedPack struct {
	*io.PipeReader
	done chan struct{}
}

func (p *encodedPack) Close() error {
	err := p.PipeReader.Close()
	<-p.done
	return err
}

// copiedPacks returns the packs written since the last push as one pack, when together they
// hold each object of hashes once and nothing else, and are all still on disk (a merge of
// packs rewrites them) in a SHA-1 repository.
func (r *Repo) copiedPacks(hashes []plumbing.Hash) (io.ReadCloser, bool) {
	if len(r.written) == 0 || !r.sha1() {
		return nil, false
	}
	want := make(map[plumbing.Hash]bool, len(hashes))
	for _, h := range hashes {
		want[h] = true
	}
	for _, p := range r.written {
		for _, h := range p.objects {
			if !want[h] {
				return nil, false // an object twice, or one the remote does not lack
			}
			delete(want, h)
		}
	}
	if len(want) > 0 {
		return nil, false
	}
	c := &copiedPack{sum: sha1.New()} //nolint:gosec // see the import
	for _, p := range r.written {
		if !c.add(r.packPath(p.name), len(p.objects)) {
			_ = c.Close()
			return nil, false
		}
	}
	c.start()
	return c, true
}

// sha1 reports a repository whose objects are named by SHA-1 (Git's default).
func (r *Repo) sha1() bool { return r.format != config.SHA256 }

// copiedPack reads as one pack the entries of several pack files: a header counting all of
// them, each file's entries as they are, and the SHA-1 of what came before as its trailer.
type copiedPack struct {
	files   []*os.File
	entries []io.Reader
	count   uint32
	size    int64 // of all the entries
	sum     hash.Hash
	body    io.Reader
	trailer []byte
}

// packHeader and packTrailer are the bytes around a pack file's entries.
const (
	packHeader  = 12
	packTrailer = 20
)

// add opens a pack file this copy wrote with count objects (its header must say so).
func (c *copiedPack) add(path string, count int) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	c.files = append(c.files, f)
	var head [packHeader]byte
	info, err := f.Stat()
	if err != nil || info.Size() < packHeader+packTrailer {
		return false
	}
	if _, err := io.ReadFull(f, head[:]); err != nil || string(head[:4]) != "PACK" ||
		binary.BigEndian.Uint32(head[4:8]) != 2 || binary.BigEndian.Uint32(head[8:12]) != uint32(count) {
		return false
	}
	c.entries = append(c.entries, io.NewSectionReader(f, packHeader, info.Size()-packHeader-packTrailer))
	c.count += uint32(count)
	c.size += info.Size() - packHeader - packTrailer
	return true
}

func (c *copiedPack) start() {
	head := make([]byte, packHeader)
	copy(head, "PACK")
	binary.BigEndian.PutUint32(head[4:8], 2)
	binary.BigEndian.PutUint32(head[8:12], c.count)
	parts := append([]io.Reader{bytes.NewReader(head)}, c.entries...)
	c.body = io.TeeReader(io.MultiReader(parts...), c.sum)
}

func (c *copiedPack) Read(p []byte) (int, error) {
	if c.body != nil {
		n, err := c.body.Read(p)
		if err != io.EOF {
			return n, err
		}
		c.body, c.trailer = nil, c.sum.Sum(nil)
		if n > 0 {
			return n, nil
		}
	}
	if len(c.trailer) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.trailer)
	c.trailer = c.trailer[n:]
	return n, nil
}

func (c *copiedPack) Close() error {
	var first error
	for _, f := range c.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.files = nil
	return first
}
