package watch

import (
	"context"
	"sort"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Wanted is one stream an owner (a GitTarget) wants, with the subscriber that receives it.
// Fingerprint summarizes the subscriber's filter and destination: when it changes, the
// subscriber is replaced and receives a fresh snapshot from the stream's cache.
type Wanted struct {
	Key         StreamKey
	Resource    Resource
	Subscriber  Subscriber
	Fingerprint string
}

// KeyStatus is the state of one stream an owner subscribes to.
type KeyStatus struct {
	Key StreamKey
	StreamStatus
}

// Hub runs the streams that owners want: one per StreamKey, shared by every owner that
// wants it (W2), stopped when the last owner lets go. The mutex guards only the maps of
// handles; each stream's state belongs to its goroutine.
type Hub struct {
	ctx      context.Context
	client   dynamic.Interface
	sanitize func(*unstructured.Unstructured) ([]byte, error)
	log      logr.Logger

	mu      sync.Mutex
	streams map[StreamKey]*Stream
	owners  map[string]map[StreamKey]string // owner -> key -> fingerprint
}

// NewHub returns a hub whose streams read through client, sanitize with sanitize and end
// with ctx.
func NewHub(ctx context.Context, client dynamic.Interface, sanitize func(*unstructured.Unstructured) ([]byte, error), log logr.Logger) *Hub {
	return &Hub{ctx: ctx, client: client, sanitize: sanitize, log: log,
		streams: map[StreamKey]*Stream{}, owners: map[string]map[StreamKey]string{}}
}

// Changed returns the keys of wanted whose subscription is new or differs from what the
// owner has now: those receive a snapshot once Set installs them.
func (h *Hub) Changed(owner string, wanted []Wanted) []StreamKey {
	h.mu.Lock()
	defer h.mu.Unlock()
	var keys []StreamKey
	for _, w := range wanted {
		if fp, ok := h.owners[owner][w.Key]; !ok || fp != w.Fingerprint {
			keys = append(keys, w.Key)
		}
	}
	return keys
}

// Set makes the owner's subscriptions exactly wanted: new or changed ones are subscribed
// (starting their streams when needed), ones no longer wanted are dropped (stopping
// streams nobody wants any more). Set with nil releases the owner.
func (h *Hub) Set(owner string, wanted []Wanted) {
	h.mu.Lock()
	defer h.mu.Unlock()
	had := h.owners[owner]
	now := map[StreamKey]string{}
	for _, w := range wanted {
		now[w.Key] = w.Fingerprint
		if fp, ok := had[w.Key]; ok && fp == w.Fingerprint {
			continue
		}
		h.stream(w.Key, w.Resource).Subscribe(owner, w.Subscriber)
	}
	for key := range had {
		if _, keep := now[key]; keep {
			continue
		}
		if s, ok := h.streams[key]; ok {
			s.Unsubscribe(owner)
		}
		h.stopIfUnwanted(key, owner)
	}
	if len(now) == 0 {
		delete(h.owners, owner)
	} else {
		h.owners[owner] = now
	}
}

// Status reports the streams of one owner, sorted by key.
func (h *Hub) Status(owner string) []KeyStatus {
	h.mu.Lock()
	var streams []KeyStatus
	handles := map[StreamKey]*Stream{}
	for key := range h.owners[owner] {
		streams = append(streams, KeyStatus{Key: key})
		handles[key] = h.streams[key]
	}
	h.mu.Unlock()
	for i := range streams {
		if s := handles[streams[i].Key]; s != nil {
			streams[i].StreamStatus = s.Status()
		}
	}
	sort.Slice(streams, func(i, j int) bool { return streams[i].Key.String() < streams[j].Key.String() })
	return streams
}

// Len is the number of running streams.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams)
}

// stream returns the running stream of key, starting it when there is none.
func (h *Hub) stream(key StreamKey, res Resource) *Stream {
	if s, ok := h.streams[key]; ok {
		select {
		case <-s.Done():
		default:
			return s
		}
	}
	s := StartStream(h.ctx, StreamConfig{Key: key, Resource: res, Client: h.client, Sanitize: h.sanitize,
		Log: h.log.WithValues("stream", key.String())})
	h.streams[key] = s
	return s
}

// stopIfUnwanted stops the stream of key when no owner other than leaving wants it.
func (h *Hub) stopIfUnwanted(key StreamKey, leaving string) {
	for owner, keys := range h.owners {
		if owner == leaving {
			continue
		}
		if _, ok := keys[key]; ok {
			return
		}
	}
	if s, ok := h.streams[key]; ok {
		s.Stop()
		delete(h.streams, key)
	}
}
