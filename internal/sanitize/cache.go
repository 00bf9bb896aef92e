package sanitize

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cacheSize is how many reduced documents a Defaulter remembers: enough for the documents of
// a resync of a typical target folder, small enough to be negligible in memory.
const cacheSize = 512

type cacheKey [sha256.Size]byte

// keyOf hashes (gvr, sourceDoc, liveDoc). Each part is length-prefixed so that no two
// different triples share an encoding.
func keyOf(gvr schema.GroupVersionResource, sourceDoc, liveDoc []byte) cacheKey {
	h := sha256.New()
	var n [8]byte
	for _, part := range [][]byte{[]byte(gvr.Group), []byte(gvr.Version), []byte(gvr.Resource), sourceDoc, liveDoc} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var k cacheKey
	copy(k[:], h.Sum(nil))
	return k
}

// resultCache is a bounded map that forgets its oldest entry first. It is safe for
// concurrent use: one Defaulter may serve several branch workers.
type resultCache struct {
	mu    sync.Mutex
	items map[cacheKey][]byte
	order []cacheKey // ring of keys in insertion order
	next  int        // where the next key goes in order
}

func newResultCache(size int) *resultCache {
	return &resultCache{items: make(map[cacheKey][]byte, size), order: make([]cacheKey, 0, size)}
}

func (c *resultCache) get(k cacheKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.items[k]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), v...), true
}

func (c *resultCache) put(k cacheKey, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		c.items[k] = append([]byte(nil), v...)
		return
	}
	if len(c.order) < cap(c.order) {
		c.order = append(c.order, k)
	} else {
		delete(c.items, c.order[c.next])
		c.order[c.next] = k
		c.next = (c.next + 1) % len(c.order)
	}
	c.items[k] = append([]byte(nil), v...)
}

func (c *resultCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
